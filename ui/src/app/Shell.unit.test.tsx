import { describe, expect, it } from 'vitest';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Shell, current, groupsSummary } from './Shell';
import { renderPage } from '../test-support/render';

describe('shell', () => {
  it('is the section of the path and of the paths below it, not of a longer name', () => {
    expect(current('/applications', '/applications')).toBe(true);
    expect(current('/applications/argocd/guestbook', '/applications')).toBe(true);
    expect(current('/applicationsets', '/applications')).toBe(false);
  });

  it("shows the user's groups in the top bar and all of them in the user menu", async () => {
    const user = userEvent.setup();
    expect(groupsSummary([])).toBe('no groups');
    expect(groupsSummary(['a', 'b', 'c', 'd'])).toBe('a, b +2');
    renderPage(
      <Shell user={{ loggedIn: true, username: 'alice', groups: ['tenant-a', 'ops', 'auditors'] }}>
        <p>page</p>
      </Shell>,
      '/clusters',
    );
    expect(screen.getByRole('link', { name: 'Clusters' }).getAttribute('aria-current')).toBe('page');
    const menu = screen.getByRole('button', { name: /alice/ });
    expect(menu.textContent).toBe('alice (tenant-a, ops +1)');
    menu.focus();
    await user.keyboard('{Enter}');
    const groups = screen.getByRole('list', { name: 'Groups' });
    expect(groups.textContent).toBe('tenant-aopsauditors');
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('list', { name: 'Groups' })).toBeNull();
  });
});
