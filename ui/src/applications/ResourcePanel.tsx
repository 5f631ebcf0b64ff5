// One resource: its status, and git's (desired) manifest against the live one with their
// field-level diff, from the api's ManagedResources (read as the Application's ServiceAccount;
// Secrets masked there), and its events. The diff compares as Argo CD's does: the predicted live
// object (live with git's fields applied) against the normalized live one, so that what the server
// fills in (uid, status, defaults) is not shown as a difference. An object the managed ones own (a ReplicaSet, a Pod) has no manifest in git: its
// panel shows its events.
import type { ReactNode } from 'react';
import { Dialog, Tabs } from 'radix-ui';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { PanelTarget } from './graph-layout';
import { ResourceEvents } from './ResourceEvents';
import { QueryState } from '../app/QueryState';
import { pretty } from './diff';
import { FieldDiffView } from './FieldDiffView';
import { HealthBadge, SyncBadge } from './Badges';
import { CloseButton } from '../forms/DialogParts';

interface ManagedResource {
  kind?: string;
  name?: string;
  namespace?: string;
  group?: string;
  liveState?: string;
  targetState?: string;
  normalizedLiveState?: string;
  predictedLiveState?: string;
}

export function ResourcePanel(props: {
  appName: string;
  appNamespace: string;
  resource: PanelTarget | undefined;
  onClose: () => void;
}) {
  const r = props.resource;
  const managed = useQuery({
    enabled: r !== undefined && !r.owned,
    queryKey: ['managed', props.appNamespace, props.appName, r?.group, r?.kind, r?.namespace, r?.name],
    queryFn: async () => {
      const res = unwrap(
        await api.GET('/api/v1/applications/{applicationName}/managed-resources', {
          params: {
            path: { applicationName: props.appName },
            query: {
              appNamespace: props.appNamespace,
              kind: r!.kind,
              name: r!.name,
              namespace: r!.namespace ?? '',
              group: r!.group ?? '',
            },
          },
        }),
      ) as { items?: ManagedResource[] };
      return res.items?.[0] ?? {};
    },
  });
  return (
    <Dialog.Root open={r !== undefined} onOpenChange={(o) => !o && props.onClose()}>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog sheet">
          <Dialog.Title>
            {r?.kind} {r?.name}
          </Dialog.Title>
          <Dialog.Description>
            {r?.namespace ? `namespace ${r.namespace}` : 'cluster-scoped'}{' '}
            {r?.health?.status && <HealthBadge status={r.health.status} />}{' '}
            {r?.status && <SyncBadge status={r.status} />}
          </Dialog.Description>
          {r?.owned ? (
            <ResourceEvents appName={props.appName} appNamespace={props.appNamespace} resource={r} />
          ) : (
            <QueryState isPending={managed.isPending} error={managed.error} what="read this resource">
              {() => (
                <Manifests
                  m={managed.data!}
                  events={
                    <ResourceEvents appName={props.appName} appNamespace={props.appNamespace} resource={r!} />
                  }
                />
              )}
            </QueryState>
          )}
          <CloseButton label="Close" />
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

function Manifests({ m, events }: { m: ManagedResource; events: ReactNode }) {
  const desired = pretty(m.targetState);
  const live = pretty(m.normalizedLiveState || m.liveState);
  return (
    <Tabs.Root defaultValue="diff">
      <Tabs.List aria-label="manifests" className="tabs">
        <Tabs.Trigger value="diff">Diff</Tabs.Trigger>
        <Tabs.Trigger value="desired">Desired</Tabs.Trigger>
        <Tabs.Trigger value="live">Live</Tabs.Trigger>
        <Tabs.Trigger value="events">Events</Tabs.Trigger>
      </Tabs.List>
      <Tabs.Content value="diff">
        <FieldDiffView
          targetState={m.predictedLiveState || m.targetState}
          liveState={m.normalizedLiveState || m.liveState}
        />
      </Tabs.Content>
      <Tabs.Content value="desired">
        <pre className="code" tabIndex={0}>
          {desired || '(not in git)'}
        </pre>
      </Tabs.Content>
      <Tabs.Content value="live">
        <pre className="code" tabIndex={0}>
          {live || '(not in the cluster)'}
        </pre>
      </Tabs.Content>
      <Tabs.Content value="events">{events}</Tabs.Content>
    </Tabs.Root>
  );
}
