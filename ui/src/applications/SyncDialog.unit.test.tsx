import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { SyncDialog } from './SyncDialog';
import { DeleteDialog } from './DeleteDialog';
import type { Application } from '../api/views';
import { selectedForSync } from './SyncResourcePicker';
import { resourceId } from './graph-layout';

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

  it('picks resources for a selective sync: all ticked is a full sync, unticking narrows it', async () => {
    const user = userEvent.setup();
    const resources = [
      { kind: 'ConfigMap', name: 'guestbook-config', namespace: 'team-a', status: 'OutOfSync' },
      { group: 'apps', kind: 'Deployment', name: 'guestbook-ui', namespace: 'team-a', status: 'OutOfSync' },
    ];
    wrap(<SyncDialog app={{ ...app, status: { resources } }} />);
    await user.click(screen.getByRole('button', { name: 'Sync' }));
    const group = screen.getByRole('group', { name: 'Resources' });
    const boxes = () =>
      screen.getAllByRole('checkbox').filter((b) => group.contains(b)) as HTMLInputElement[];
    expect(boxes().map((b) => b.checked)).toEqual([true, true]);
    expect(screen.queryByRole('note')).toBeNull();
    await user.click(screen.getByRole('checkbox', { name: 'Deployment team-a/guestbook-ui' }));
    expect(screen.getByRole('note').textContent).toContain('hooks do not run');
    await user.click(screen.getByRole('button', { name: 'None' }));
    expect(boxes().every((b) => !b.checked)).toBe(true);
    expect((screen.getByRole('button', { name: 'Synchronize' }) as HTMLButtonElement).disabled).toBe(true);
    await user.click(screen.getByRole('button', { name: 'All' }));
    expect((screen.getByRole('button', { name: 'Synchronize' }) as HTMLButtonElement).disabled).toBe(false);
    // What the request carries.
    const all = new Set(resources.map(resourceId));
    expect(selectedForSync(resources, all)).toEqual([]);
    expect(selectedForSync(resources, new Set([resourceId(resources[0]!)]))).toEqual([
      { group: '', kind: 'ConfigMap', name: 'guestbook-config', namespace: 'team-a' },
    ]);
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
