// The story's project token step (issue 16), as Argo CD's: the admin gives team-a a role `ci` that
// may only get and sync guestbook-banner, and creates a token of it (printed once, kept here in
// memory only); a CI system calling with that token (CAPSTAN_AUTH_TOKEN) lists only guestbook-banner
// and may not read guestbook; once the token is deleted by its id, the api refuses it.
import { capstan } from './capstan-cli.js';
import { done, heading, step } from './progress.js';
import { story } from './stack.js';

export async function runProjectTokenStep(application: string): Promise<void> {
  heading('Project tokens: a CI system acts as a project role');
  const role = 'ci';
  const id = 'ci-pipeline';
  step(`role ${role} of ${story.project}: get and sync ${application} only`);
  await capstan(['proj', 'role', 'create', story.project, role, '--description', 'the CI pipeline']);
  for (const action of ['get', 'sync'])
    await capstan(['proj', 'role', 'add-policy', story.project, role, '-a', action, '-o', application]);
  done();

  step(`a token of the role, id ${id}, for an hour (the token is printed once: kept in memory here)`);
  const token = (
    await capstan(
      ['proj', 'role', 'create-token', story.project, role, '--id', id, '--expires-in', '1h', '--token-only'],
      { quiet: true },
    )
  ).stdout.trim();
  await capstan(['proj', 'role', 'list-tokens', story.project, role]);
  done();

  step(
    `as the CI system (CAPSTAN_AUTH_TOKEN): it sees ${application} only, and may not read ${story.application}`,
  );
  await capstan(['app', 'list'], { token });
  const denied = await capstan(['app', 'get', story.application], { token, expectFailure: true });
  if (denied.code === 0) throw new Error(`the ${role} token could read ${story.application}`);
  done();

  step(`delete the token by its id: the api refuses it from now on`);
  await capstan(['proj', 'role', 'delete-token', story.project, role, id]);
  const revoked = await capstan(['app', 'list'], { token, expectFailure: true });
  if (revoked.code === 0) throw new Error('the deleted token still works');
  done();
}
