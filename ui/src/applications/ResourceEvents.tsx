// One object's Kubernetes events (Argo CD's ListResourceEvents), listed by the sync service as the
// Application's ServiceAccount. When that ServiceAccount may not list events the panel says so: the
// api never lists them with the control plane's credentials instead.
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { EventList } from '../api/live-views';
import { QueryState } from '../app/QueryState';

export function ResourceEvents(props: {
  appName: string;
  appNamespace: string;
  resource: { name: string; namespace?: string; uid?: string };
}) {
  const { name, namespace = '', uid = '' } = props.resource;
  const events = useQuery({
    enabled: uid !== '',
    queryKey: ['events', props.appNamespace, props.appName, namespace, name, uid],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/applications/{name}/events', {
          params: {
            path: { name: props.appName },
            query: {
              appNamespace: props.appNamespace,
              resourceName: name,
              resourceNamespace: namespace,
              resourceUID: uid,
            },
          },
        }),
      ) as EventList,
  });
  if (uid === '') return <p className="muted">Not in the cluster: no events.</p>;
  return (
    <QueryState isPending={events.isPending} error={events.error} what="list this resource's events">
      {() => <EventTable list={events.data!} />}
    </QueryState>
  );
}

export function EventTable({ list }: { list: EventList }) {
  if (list.error)
    return (
      <p role="alert" className="error">
        Events cannot be shown: {list.error}
      </p>
    );
  const items = list.items ?? [];
  if (items.length === 0) return <p className="muted">No events.</p>;
  return (
    <table className="table">
      <caption>Kubernetes events, newest last</caption>
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col">Reason</th>
          <th scope="col">Message</th>
          <th scope="col">Count</th>
          <th scope="col">Last seen</th>
        </tr>
      </thead>
      <tbody>
        {items.map((e, i) => (
          <tr key={e.metadata?.uid ?? i} className={e.type === 'Warning' ? 'warning' : undefined}>
            <td>{e.type}</td>
            <td>{e.reason}</td>
            <td>{e.message}</td>
            <td>{e.count ?? 1}</td>
            <td>{e.lastTimestamp ? new Date(e.lastTimestamp).toLocaleString() : ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
