import { describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { AccountsPage } from './AccountsPage';
import { renderPage } from '../test-support/render';
import { answer, calls, invalidAnswer } from '../test-support/http';

const accounts = [
  {
    name: 'ci',
    enabled: true,
    capabilities: ['apiKey'],
    groups: ['deployers'],
    tokens: [{ id: 'old', issuedAt: '2026-01-01T00:00:00Z', expiresAt: '' }],
  },
  { name: 'alice', enabled: true, capabilities: ['login'], groups: [], tokens: [] },
];

describe('accounts and tokens', () => {
  it('creates a token, shows it once, and forgets it when the dialog closes', async () => {
    const user = userEvent.setup();
    answer(({ method, path, body }) => {
      if (method === 'GET' && path === '/api/v1/account') return { body: { items: accounts } };
      if (method === 'POST' && path === '/api/v1/account/ci/token') {
        if ((body as { expiresIn: number }).expiresIn < 0)
          return invalidAnswer(['expiresIn', 'must not be negative']);
        return { body: { token: 'eyJ.secret.token', id: (body as { id: string }).id } };
      }
      return undefined;
    });
    renderPage(<AccountsPage />, '/accounts');
    const ci = (await screen.findByRole('heading', { name: 'ci' })).closest('li')!;
    expect(within(ci).getByRole('cell', { name: 'old' })).toBeTruthy();
    expect(screen.getByText('This account cannot have API tokens (no apiKey capability).')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'New token for alice' })).toBeNull();

    await user.click(within(ci).getByRole('button', { name: 'New token for ci' }));
    const dialog = screen.getByRole('dialog', { name: 'New API token for ci' });
    await user.type(within(dialog).getByLabelText('ID'), 'deploy');
    const expires = within(dialog).getByLabelText('Expires in (days)');
    await user.type(expires, '-1');
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await within(dialog).findByText('must not be negative')).toBeTruthy();
    expect(expires.getAttribute('aria-invalid')).toBe('true');
    await user.clear(expires);
    await user.type(expires, '30');
    await user.click(within(dialog).getByRole('button', { name: 'Create' }));
    const shown = (await within(dialog).findByLabelText('Token deploy')) as HTMLTextAreaElement;
    expect(shown.value).toBe('eyJ.secret.token');
    expect(calls.at(-2)!.body).toEqual({ id: 'deploy', expiresIn: 30 * 86_400 });
    await user.click(within(dialog).getByRole('button', { name: 'Done' }));
    await user.click(within(ci).getByRole('button', { name: 'New token for ci' }));
    expect(screen.queryByText('eyJ.secret.token')).toBeNull();
    expect(screen.queryByDisplayValue('eyJ.secret.token')).toBeNull();
  });

  it('revokes a token after a confirmation', async () => {
    const user = userEvent.setup();
    answer(({ method, path }) => {
      if (method === 'GET' && path === '/api/v1/account') return { body: { items: accounts } };
      if (method === 'DELETE') return { body: {} };
      return undefined;
    });
    renderPage(<AccountsPage />, '/accounts');
    await user.click(await screen.findByRole('button', { name: 'Revoke token old' }));
    await user.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Revoke' }));
    await waitFor(() =>
      expect(calls.some((c) => c.method === 'DELETE' && c.path === '/api/v1/account/ci/token/old')).toBe(
        true,
      ),
    );
  });
});
