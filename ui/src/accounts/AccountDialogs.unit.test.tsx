import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { AccountsPage } from './AccountsPage';
import { renderPage } from '../test-support/render';
import { answer, calls, invalidAnswer } from '../test-support/http';

const accounts = [
  { name: 'admin', enabled: true, capabilities: ['login'], groups: [], tokens: [] },
  { name: 'ci', enabled: true, capabilities: ['apiKey'], groups: ['deployers'], tokens: [] },
];
const session = { loggedIn: true, username: 'admin', groups: [] };

describe('accounts: create, set a password, delete', () => {
  it('creates an account with its capabilities and groups, showing the api field message first', async () => {
    const user = userEvent.setup();
    answer(({ method, path, body }) => {
      if (path === '/api/v1/session/userinfo') return { body: session };
      if (method === 'GET' && path === '/api/v1/account') return { body: { items: accounts } };
      if (method === 'POST' && path === '/api/v1/account') {
        if ((body as { name: string }).name === 'Bad Name')
          return invalidAnswer(['name', 'must be a DNS-1123 label']);
        return { body: { name: 'deployer' } };
      }
      return undefined;
    });
    renderPage(<AccountsPage />, '/accounts');
    await user.click(await screen.findByRole('button', { name: 'New account' }));
    const dialog = screen.getByRole('dialog', { name: 'New local account' });
    const name = within(dialog).getByLabelText('Name');
    await user.type(name, 'Bad Name');
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await within(dialog).findByText('must be a DNS-1123 label')).toBeTruthy();
    expect(name.getAttribute('aria-invalid')).toBe('true');
    await user.clear(name);
    await user.type(name, 'deployer');
    await user.type(within(dialog).getByLabelText('Password'), 'a-long-passw0rd');
    await user.click(within(dialog).getByRole('checkbox', { name: 'apiKey' }));
    await user.click(within(dialog).getByRole('checkbox', { name: 'login' }));
    await user.type(within(dialog).getByLabelText('Groups'), 'deployers, auditors');
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.filter((c) => c.method === 'POST').at(-1)!.body).toEqual({
      name: 'deployer',
      password: 'a-long-passw0rd',
      capabilities: ['apiKey'],
      groups: ['deployers', 'auditors'],
    });
  });

  it("asks for the current password only on one's own account, and deletes only others", async () => {
    const user = userEvent.setup();
    answer(({ method, path }) => {
      if (path === '/api/v1/session/userinfo') return { body: session };
      if (method === 'GET' && path === '/api/v1/account') return { body: { items: accounts } };
      if (method === 'PUT' && path === '/api/v1/account/password') return { body: {} };
      if (method === 'DELETE' && path === '/api/v1/account/ci') return { body: {} };
      return undefined;
    });
    renderPage(<AccountsPage />, '/accounts');
    await screen.findByRole('heading', { name: 'ci' });
    await user.click(screen.getByRole('button', { name: 'Set the password of admin' }));
    let dialog = screen.getByRole('dialog', { name: 'Password of admin' });
    // The field appears once the session says who is logged in: admin itself.
    await user.type(await within(dialog).findByLabelText('Current password'), 'old-passw0rd');
    await user.type(within(dialog).getByLabelText('New password'), 'new-passw0rd');
    await user.click(within(dialog).getByRole('button', { name: 'Change' }));
    expect(await within(dialog).findByText('Password changed.')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'PUT').at(-1)!.body).toEqual({
      name: 'admin',
      currentPassword: 'old-passw0rd',
      newPassword: 'new-passw0rd',
    });
    await user.click(within(dialog).getByRole('button', { name: 'Done' }));
    expect(screen.queryByRole('button', { name: 'Delete account admin' })).toBeNull();

    await user.click(screen.getByRole('button', { name: 'Set the password of ci' }));
    dialog = screen.getByRole('dialog', { name: 'Password of ci' });
    expect(within(dialog).queryByLabelText('Current password')).toBeNull();
    await user.keyboard('{Escape}');

    await user.click(screen.getByRole('button', { name: 'Delete account ci' }));
    await user.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    await waitFor(() =>
      expect(calls.some((c) => c.method === 'DELETE' && c.path === '/api/v1/account/ci')).toBe(true),
    );
  });
});
