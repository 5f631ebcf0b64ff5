import { describe, expect, it } from 'vitest';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { AuditPage } from './AuditPage';
import { renderPage } from '../test-support/render';
import { answer, calls } from '../test-support/http';

const row = (id: number) => ({
  id,
  time: '2026-11-28T00:00:00Z',
  fields: { application: 'argocd/guestbook', decision: 'allow', actor: 'admin' },
});

describe('audit explorer', () => {
  it('filters from the URL, shows the chain status, and pages with the api token', async () => {
    const user = userEvent.setup();
    answer(({ method, path, search }) => {
      if (method === 'POST' && path === '/api/v1/audit/verify')
        return { body: { tables: [{ table: 'sync_decisions', ok: true, checked: 3 }] } };
      if (path === '/api/v1/audit/sync_decisions') {
        const q = new URLSearchParams(search);
        return q.get('pageToken') === 'p2'
          ? { body: { rows: [row(1)] } }
          : { body: { rows: [row(3), row(2)], nextPageToken: 'p2' } };
      }
      return undefined;
    });
    const { location } = renderPage(<AuditPage />, '/audit?table=sync_decisions&application=guestbook');
    expect(await screen.findByText('2 rows shown')).toBeTruthy();
    expect(screen.getByRole('status').textContent).toContain('Hash chain verified: 3 rows intact');
    expect(screen.getAllByText(/application=argocd\/guestbook · actor=admin · decision=allow/)).toHaveLength(
      2,
    );
    const first = new URLSearchParams(calls.find((c) => c.path.endsWith('sync_decisions'))!.search);
    expect(first.get('application')).toBe('guestbook');
    await user.click(screen.getByRole('button', { name: 'Load older rows' }));
    expect(await screen.findByText('3 rows shown')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Load older rows' })).toBeNull();

    await user.clear(screen.getByLabelText('user'));
    await user.type(screen.getByLabelText('user'), 'alice');
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    await waitFor(() =>
      expect(location.history?.at(-1)).toBe('/audit?table=sync_decisions&application=guestbook&user=alice'),
    );
  });

  it('shows a broken chain as an alert', async () => {
    answer(({ method }) =>
      method === 'POST'
        ? {
            body: {
              tables: [{ table: 'sync_decisions', ok: false, firstBrokenId: 7, reason: 'hash mismatch' }],
            },
          }
        : { body: { rows: [] } },
    );
    renderPage(<AuditPage />, '/audit');
    expect((await screen.findByRole('alert')).textContent).toContain(
      'Hash chain broken at row 7: hash mismatch',
    );
    expect(screen.getByRole('button', { name: 'Export CSV' })).toHaveProperty('disabled', true);
  });
});
