import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { SyncDialog } from './SyncDialog';
import { DeleteDialog } from './DeleteDialog';
import type { Application } from '../api/views';

const app: Application = {
  metadata: { name: 'guestbook', namespace: 'argocd' },
  spec: { project: 'team-a', source: { targetRevision: 'main' } },
};

const wrap = (ui: React.ReactNode) =>
  render(<QueryClientProvider client={new QueryClient()}>{ui}</QueryClientProvider>);

describe('sync and delete dialogs', () => {
  it('opens from the keyboard with labelled options, and Escape closes it', async () => {
    const user = userEvent.setup();
    wrap(<SyncDialog app={app} />);
    screen.getByRole('button', { name: 'Sync' }).focus();
    await user.keyboard('{Enter}');
    const dialog = screen.getByRole('dialog', { name: 'Sync guestbook' });
    expect(screen.getByLabelText('Revision').getAttribute('placeholder')).toBe('main');
    await user.click(screen.getByRole('checkbox', { name: 'Prune' }));
    expect((screen.getByRole('checkbox', { name: 'Prune' }) as HTMLInputElement).checked).toBe(true);
    expect((screen.getByRole('checkbox', { name: 'Dry run' }) as HTMLInputElement).checked).toBe(false);
    expect(dialog.contains(document.activeElement)).toBe(true);
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it("offers Argo CD's three deletion choices, foreground first", async () => {
    const user = userEvent.setup();
    wrap(<DeleteDialog app={app} />);
    await user.click(screen.getByRole('button', { name: 'Delete' }));
    const radios = screen.getAllByRole('radio') as HTMLInputElement[];
    expect(radios.map((r) => r.value)).toEqual(['foreground', 'background', 'non-cascading']);
    expect(radios[0]!.checked).toBe(true);
    await user.click(radios[2]!);
    expect(radios[2]!.checked).toBe(true);
  });
});
