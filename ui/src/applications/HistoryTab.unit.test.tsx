import { describe, expect, it } from 'vitest';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { HistoryTab } from './HistoryTab';
import { renderPage } from '../test-support/render';
import { answer, calls } from '../test-support/http';
import type { Application } from '../api/views';

const app: Application = {
  metadata: { name: 'guestbook', namespace: 'argocd' },
  spec: { project: 'team-a' },
  status: {
    history: [
      { id: 1, revision: 'aaaaaaaaaaaaaaaa', deployedAt: '2026-11-27T10:00:00Z' },
      { id: 2, revision: 'bbbbbbbbbbbbbbbb', deployedAt: '2026-11-27T11:00:00Z' },
    ],
  },
};

describe('history and rollback', () => {
  it('lists deployments newest first and shows the api refusing a rollback', async () => {
    const user = userEvent.setup();
    answer(() => ({
      status: 400,
      body: {
        code: 'FAILED_PRECONDITION',
        message: 'rollback cannot be initiated when auto-sync is enabled',
      },
    }));
    renderPage(<HistoryTab app={app} />);
    const rows = within(screen.getByRole('table')).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[1]!.textContent)).toEqual([
      'bbbbbbbbbbbb',
      'aaaaaaaaaaaa',
    ]);
    await user.click(within(rows[1]!).getByRole('button', { name: 'Rollback' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'rollback cannot be initiated when auto-sync is enabled',
    );
    expect(calls[0]).toMatchObject({
      method: 'POST',
      path: '/api/v1/applications/guestbook/rollback',
      body: { name: 'guestbook', id: 1, appNamespace: 'argocd' },
    });
  });

  it('says when there is no deployment yet', () => {
    renderPage(<HistoryTab app={{ ...app, status: {} }} />);
    expect(screen.getByText('No deployment yet.')).toBeTruthy();
  });
});
