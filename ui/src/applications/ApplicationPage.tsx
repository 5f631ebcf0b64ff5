// One Application: status, the resource tree, live progress from the stream, sync, history and
// rollback, delete. This module and the graph library are one chunk, loaded when a page opens.
import { useCallback, useState } from 'react';
import { Tabs } from 'radix-ui';
import { Link } from 'wouter';
import type { Application } from '../api/views';
import type { PanelTarget } from './graph-layout';
import { QueryState } from '../app/QueryState';
import { useApplication } from './queries';
import { useApplicationStream } from './useApplicationStream';
import { HealthBadge, SyncBadge } from './Badges';
import { SyncDialog } from './SyncDialog';
import { DeleteDialog } from './DeleteDialog';
import { HistoryTab } from './HistoryTab';
import { IdentityTab } from './IdentityTab';
import { ResourcePanel } from './ResourcePanel';
import ResourceGraph from './ResourceGraph';

export default function ApplicationPage({ namespace, name }: { namespace: string; name: string }) {
  const app = useApplication(namespace, name);
  const live = useApplicationStream(namespace, name);
  return (
    <section className="page">
      <p>
        <Link href="/applications">Applications</Link> / {name}
      </p>
      <QueryState isPending={app.isPending} error={app.error} what={`get the Application ${name}`}>
        {() => <ApplicationView app={app.data!} live={live} />}
      </QueryState>
    </section>
  );
}

function Progress({ app }: { app: Application }) {
  const op = app.status?.operationState;
  if (!op?.phase) return null;
  return (
    <p className={`progress phase-${op.phase.toLowerCase()}`} role="status" aria-live="polite">
      Operation: <strong>{op.phase}</strong> {op.message ? `— ${op.message}` : ''}
    </p>
  );
}

function ApplicationView({ app, live }: { app: Application; live: string }) {
  const [open, setOpen] = useState<PanelTarget | undefined>();
  const onOpen = useCallback((r: PanelTarget) => setOpen(r), []);
  const { name, namespace = '' } = app.metadata;
  return (
    <>
      <div className="app-head">
        <h1>{name}</h1>
        <SyncBadge status={app.status?.sync?.status ?? 'Unknown'} />
        <HealthBadge status={app.status?.health?.status ?? 'Unknown'} />
        <span className={`live live-${live}`}>{live === 'live' ? 'live' : live}</span>
        <span className="spacer" />
        <SyncDialog app={app} />
        <DeleteDialog app={app} />
      </div>
      <dl className="facts">
        <dt>Project</dt>
        <dd>{app.spec.project}</dd>
        <dt>Source</dt>
        <dd className="mono">
          {app.spec.source?.repoURL} {app.spec.source?.path} @ {app.spec.source?.targetRevision || 'HEAD'}
        </dd>
        <dt>Destination</dt>
        <dd className="mono">
          {app.spec.destination?.server || app.spec.destination?.name} / {app.spec.destination?.namespace}
        </dd>
        <dt>Revision</dt>
        <dd className="mono">{app.status?.sync?.revision?.slice(0, 12) || '—'}</dd>
      </dl>
      <Progress app={app} />
      <Tabs.Root defaultValue="tree">
        <Tabs.List aria-label="application views" className="tabs">
          <Tabs.Trigger value="tree">Resource tree</Tabs.Trigger>
          <Tabs.Trigger value="identity">Identity</Tabs.Trigger>
          <Tabs.Trigger value="history">History and rollback</Tabs.Trigger>
        </Tabs.List>
        <Tabs.Content value="tree">
          <ResourceGraph app={app} onOpen={onOpen} />
        </Tabs.Content>
        <Tabs.Content value="identity">
          <IdentityTab app={app} />
        </Tabs.Content>
        <Tabs.Content value="history">
          <HistoryTab app={app} />
        </Tabs.Content>
      </Tabs.Root>
      <ResourcePanel
        appName={name}
        appNamespace={namespace}
        resource={open}
        onClose={() => setOpen(undefined)}
      />
    </>
  );
}
