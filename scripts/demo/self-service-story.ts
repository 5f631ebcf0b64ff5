// The story's third chapter: self-service AppProjects through GitOps (proposal 001). The admin
// gives the platform team a project that may deliver AppProjects, and an Application that delivers
// the ones developers commit under self-service/ of the demo repository, only under team-a. Its
// sync turns team-a-web into a Capstan project (the api writes it as the delivering Application);
// a project without a parent, delivered by a second Application, is refused with the reason and
// nothing is written. Then the api's access decisions for the deliveries.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { capstan } from './capstan-cli.js';
import type { ClusterInfo } from './launch.js';
import { detail, done, heading, step } from './progress.js';
import type { StackSecrets } from './secrets.js';
import { paths, story } from './stack.js';

export const selfService = {
  file: path.join(paths.demo, 'self-service.yaml'),
  application: 'self-service-projects',
  refused: 'self-service-unbounded',
  delivered: 'team-a-web',
};

export async function runSelfServiceChapter(
  cluster: ClusterInfo,
  repoUrl: string,
  secrets: StackSecrets,
): Promise<void> {
  const file = path.join(paths.run, 'self-service.yaml');
  writeFileSync(
    file,
    readFileSync(selfService.file, 'utf8')
      .replaceAll('REPO_URL', repoUrl)
      .replaceAll('CLUSTER_SERVER', cluster.server),
  );
  const since = new Date().toISOString();

  heading('Self-service projects: developers deliver AppProjects from git, bounded by their parent');

  step('admin: project platform (may deliver AppProjects) and the Applications that deliver them');
  await capstan(['apply', '-f', file]);
  await capstan(
    [
      'repo',
      'add',
      repoUrl,
      '--project',
      'platform',
      '--username',
      story.gitUsername,
      '--password-stdin',
      '--upsert',
    ],
    { stdin: secrets.gitPassword + '\n' },
  );
  done();

  step(
    `sync ${selfService.application}: self-service/ holds AppProject ${selfService.delivered} (parent team-a)`,
  );
  await capstan(['app', 'sync', selfService.application, '--timeout', '120']);
  await capstan(['app', 'get', selfService.application]);
  await capstan(['proj', 'get', selfService.delivered]);
  done(`(${selfService.delivered} is a Capstan project now, bounded by team-a, owned by its Application)`);

  step(`sync ${selfService.refused}: its AppProject names no parent`);
  const refused = await capstan(['app', 'sync', selfService.refused, '--timeout', '120'], {
    expectFailure: true,
  });
  if (refused.code === 0) throw new Error(`the sync of ${selfService.refused} was not refused`);
  const missing = await capstan(['proj', 'get', 'free-for-all'], { expectFailure: true, quiet: true });
  if (missing.code === 0) throw new Error('the unbounded project free-for-all was written');
  detail('free-for-all does not exist: a refused delivery writes nothing');
  done();

  heading('Access decisions of the deliveries');
  await capstan([
    'audit',
    'query',
    'access_decisions',
    '--user',
    `application:argocd/${selfService.application}`,
    '--since',
    since,
  ]);
}
