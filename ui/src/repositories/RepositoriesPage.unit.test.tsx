import { describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/react';
import { RepositoryGroups, authOf } from './RepositoriesPage';

const URL = 'https://git.example.com/shared/apps.git';

describe('repository credentials per project', () => {
  it('groups by project, unscoped last, with the projects that share each checkout', () => {
    render(
      <RepositoryGroups
        items={[
          {
            repo: URL,
            project: '',
            username: 'ci',
            hasPassword: true,
            sharedCheckoutProjects: ['team-a', 'team-c'],
          },
          { repo: URL, project: 'team-b', hasSshPrivateKey: true, sharedCheckoutProjects: ['team-b'] },
        ]}
      />,
    );
    const tables = screen.getAllByRole('table');
    expect(tables.map((t) => t.querySelector('caption')?.textContent)).toEqual([
      'Project team-b',
      'Unscoped (for projects without a credential of their own)',
    ]);
    expect(within(tables[1]!).getByText('team-a, team-c')).toBeTruthy();
    expect(within(tables[0]!).getByText('only team-b')).toBeTruthy();
    expect(within(tables[0]!).getByText('SSH key')).toBeTruthy();
  });

  it('says whether a secret is held, never anything of it', () => {
    expect(authOf({ repo: URL, username: 'git', hasPassword: true })).toBe('username git and password');
    expect(authOf({ repo: URL })).toBe('anonymous');
  });
});
