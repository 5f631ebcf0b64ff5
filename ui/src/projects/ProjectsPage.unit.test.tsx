import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { ProjectPage, ProjectsPage } from './ProjectsPage';
import { renderPage } from '../test-support/render';
import { answer, calls, invalidAnswer } from '../test-support/http';

const teamA = {
  metadata: { name: 'team-a', resourceVersion: '4' },
  spec: {
    parentProject: 'platform',
    sourceRepos: ['https://git/team-a/*'],
    destinations: [{ server: 'https://k', namespace: 'team-a-*' }],
    destinationServiceAccounts: [
      { server: 'https://k', namespace: 'team-a-prod', defaultServiceAccount: 'deployer' },
    ],
  },
};
const platform = { metadata: { name: 'platform' }, spec: { sourceRepos: ['*'] } };
// The api's answer (effectiveRestrictions of @capstan/policy); the page shows it as it is.
const effective = {
  chain: ['team-a', 'platform'],
  sourceRepos: [
    { value: 'https://git/team-a/*', project: 'team-a' },
    { value: '!https://git/secrets', project: 'platform', deny: true },
  ],
  destinations: [
    {
      value: 'https://k / team-a-*',
      project: 'team-a',
      boundedBy:
        'destination server "https://k", namespace "team-a-*" is not allowed by ancestor project "platform"',
    },
  ],
  everyNamespacedResource: true,
  namespaceResources: [{ project: 'platform', deny: true, withheld: true }],
  destinationServiceAccounts: [{ value: 'https://k / team-a-prod → deployer', project: 'team-a' }],
};

describe('projects page', () => {
  it('lists the projects and creates one: the api violation shows by its field, then the fix saves', async () => {
    const user = userEvent.setup();
    answer(({ method, path, body }) => {
      if (method === 'GET' && path === '/api/v1/projects') return { body: { items: [teamA, platform] } };
      if (method === 'POST' && path === '/api/v1/projects') {
        const name = (body as { project: { metadata: { name: string } } }).project.metadata.name;
        if (name !== 'team-c')
          return invalidAnswer(['metadata.name', 'must be a lowercase RFC 1123 subdomain']);
        return { body: { metadata: { name }, spec: {} } };
      }
      return undefined;
    });
    const { location } = renderPage(<ProjectsPage />, '/projects');
    expect(await screen.findByRole('link', { name: 'team-a' })).toBeTruthy();
    expect(screen.getAllByRole('cell', { name: 'platform' })).toHaveLength(2); // team-a's parent, and itself

    screen.getByRole('button', { name: 'New project' }).focus();
    await user.keyboard('{Enter}');
    const dialog = screen.getByRole('dialog', { name: 'New project' });
    const name = within(dialog).getByLabelText('Name');
    await user.type(name, 'Team_C');
    await user.type(within(dialog).getByLabelText('Source repositories'), 'https://git/team-c/*');
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(name.getAttribute('aria-invalid')).toBe('true'));
    const described = document.getElementById(name.getAttribute('aria-describedby')!.split(' ').at(-1)!);
    expect(described!.textContent).toBe('must be a lowercase RFC 1123 subdomain');
    expect(calls.at(-1)!.body).toEqual({
      project: {
        metadata: { name: 'Team_C' },
        spec: { sourceRepos: ['https://git/team-c/*'], destinations: [], destinationServiceAccounts: [] },
      },
    });

    await user.clear(name);
    await user.type(name, 'team-c');
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(location.history?.at(-1)).toBe('/projects/team-c'));
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('shows a denial as the denial page', async () => {
    answer(() => ({
      status: 403,
      body: { code: 'PERMISSION_DENIED', message: 'permission denied: projects' },
    }));
    renderPage(<ProjectsPage />, '/projects');
    expect(await screen.findByRole('heading', { name: 'Permission denied' })).toBeTruthy();
  });
});

describe('project page', () => {
  const chainAnswers = ({ method, path }: { method: string; path: string }) => {
    if (method === 'GET' && path === '/api/v1/projects/team-a') return { body: teamA };
    if (method === 'GET' && path === '/api/v1/projects/platform') return { body: platform };
    if (method === 'GET' && path === '/api/v1/projects/team-a/effective-restrictions')
      return { body: effective };
    return undefined;
  };

  it("shows the chain, this project first, with each link's restrictions", async () => {
    answer(chainAnswers);
    renderPage(<ProjectPage name="team-a" />, '/projects/team-a');
    const chain = await screen.findByRole('list', { name: /parent chain/ });
    const links = within(chain).getAllByRole('listitem');
    expect(links.map((l) => within(l).getByRole('heading').textContent)).toEqual([
      'team-a ',
      'platform (root)',
    ]);
    expect(within(links[0]!).getByText('https://k / team-a-prod → deployer')).toBeTruthy();
    expect(within(links[1]!).getByText('*')).toBeTruthy();
  });

  it("shows the chain's effective restrictions as the api answers them, by the link that declares each", async () => {
    answer(chainAnswers);
    renderPage(<ProjectPage name="team-a" />, '/projects/team-a');
    const table = await screen.findByRole('table', { name: /Effective restrictions: .* team-a → platform/ });
    const row = (name: string) => within(table).getByRole('row', { name: new RegExp(`^${name}`) });
    const [allowed, denied] = within(row('Sources')).getAllByRole('cell');
    expect(allowed!.textContent).toBe('https://git/team-a/* from team-a');
    expect(denied!.textContent).toBe('!https://git/secrets from platform');
    expect(
      within(row('Destinations')).getByText(/bounded by a parent: .*ancestor project "platform"/),
    ).toBeTruthy();
    expect(within(row('Cluster resources')).getAllByRole('cell')[0]!.textContent).toBe('none');
    const [every, withheld] = within(row('Namespaced resources')).getAllByRole('cell');
    expect(every!.textContent).toBe('every kind');
    expect(withheld!.textContent).toBe('withheld (you may not get project platform) from platform');
    expect(within(row('ServiceAccounts')).getByText('https://k / team-a-prod → deployer')).toBeTruthy();
  });

  it('edits the main fields keeping the version, and deletes after a confirmation', async () => {
    const user = userEvent.setup();
    answer((c) => {
      if (c.method === 'PUT') return { body: c.body && (c.body as { project: unknown }).project };
      if (c.method === 'DELETE')
        return {
          status: 400,
          body: { code: 'FAILED_PRECONDITION', message: 'project team-a has Applications' },
        };
      return chainAnswers(c);
    });
    renderPage(<ProjectPage name="team-a" />, '/projects/team-a');
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    const dialog = screen.getByRole('dialog', { name: 'Edit team-a' });
    expect(within(dialog).queryByLabelText('Name')).toBeNull();
    expect((within(dialog).getByLabelText('Parent project') as HTMLInputElement).value).toBe('platform');
    await user.type(within(dialog).getByLabelText('Description'), 'Team A');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    const put = calls.find((c) => c.method === 'PUT')!;
    expect(put.path).toBe('/api/v1/projects/team-a');
    expect(put.body).toMatchObject({
      project: { metadata: { name: 'team-a', resourceVersion: '4' }, spec: { description: 'Team A' } },
    });

    await user.click(screen.getByRole('button', { name: 'Delete' }));
    const confirm = screen.getByRole('dialog', { name: 'Delete the project team-a' });
    await user.click(within(confirm).getByRole('button', { name: 'Delete' }));
    expect((await within(confirm).findByRole('alert')).textContent).toBe('project team-a has Applications');
  });
});
