// Sync with options (Argo CD's sync panel): revision, prune, dry run, and which resources
// (SyncResourcePicker: a selective sync). Radix Dialog gives the focus trap, Escape and the
// labelled dialog role.
import { useState, type FormEvent } from 'react';
import { Dialog } from 'radix-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { Application } from '../api/views';
import { applicationKey } from './queries';
import { resourceId } from './graph-layout';
import { selectedForSync, SyncResourcePicker } from './SyncResourcePicker';
import { ErrorAlert, CloseButton } from '../forms/DialogParts';

export function SyncDialog({ app }: { app: Application }) {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [revision, setRevision] = useState('');
  const [prune, setPrune] = useState(false);
  const [dryRun, setDryRun] = useState(false);
  const resources = app.status?.resources ?? [];
  const [ticked, setTicked] = useState<Set<string>>(new Set());
  const { name, namespace = '' } = app.metadata;
  const openWith = (o: boolean) => {
    // Each opening starts from a full sync: every resource ticked.
    if (o) setTicked(new Set(resources.map(resourceId)));
    setOpen(o);
  };
  const sync = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/v1/applications/{name}/sync', {
          params: { path: { name } },
          body: {
            name,
            appNamespace: namespace,
            revision,
            prune,
            dryRun,
            resources: selectedForSync(resources, ticked),
          },
        }),
      ) as { operationId?: string; application?: Application },
    onSuccess: (r) => {
      if (r.application) qc.setQueryData(applicationKey(namespace, name), r.application);
      setOpen(false);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    sync.mutate();
  };
  return (
    <Dialog.Root open={open} onOpenChange={openWith}>
      <Dialog.Trigger asChild>
        <button type="button" className="button primary">
          Sync
        </button>
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog">
          <Dialog.Title>Sync {name}</Dialog.Title>
          <Dialog.Description>
            Apply git&apos;s objects to the cluster as the Application&apos;s ServiceAccount.
          </Dialog.Description>
          <form onSubmit={submit}>
            <label htmlFor="sync-revision">Revision</label>
            <input
              id="sync-revision"
              placeholder={app.spec.source?.targetRevision || 'HEAD'}
              value={revision}
              onChange={(e) => setRevision(e.target.value)}
            />
            <label className="check">
              <input type="checkbox" checked={prune} onChange={(e) => setPrune(e.target.checked)} /> Prune
            </label>
            <label className="check">
              <input type="checkbox" checked={dryRun} onChange={(e) => setDryRun(e.target.checked)} /> Dry run
            </label>
            <SyncResourcePicker resources={resources} ticked={ticked} onChange={setTicked} />
            <ErrorAlert error={sync.error} />
            <div className="actions">
              <CloseButton />
              <button
                type="submit"
                className="button primary"
                disabled={sync.isPending || (resources.length > 0 && ticked.size === 0)}
              >
                {sync.isPending ? 'Syncing…' : 'Synchronize'}
              </button>
            </div>
          </form>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
