// The clusters the caller may get: add, edit, remove. Credentials are shown only as their kind.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { QueryState } from '../app/QueryState';
import { ConfirmDelete } from '../forms/ConfirmDelete';
import { ClusterFormDialog } from './ClusterForm';
import type { Cluster } from './cluster-form';

export function ClustersPage() {
  const list = useQuery({
    queryKey: ['clusters'],
    queryFn: async () => (unwrap(await api.GET('/api/v1/clusters')) as { items?: Cluster[] }).items ?? [],
  });
  return (
    <section className="page">
      <div className="page-head">
        <h1>Clusters</h1>
        <ClusterFormDialog />
      </div>
      <QueryState isPending={list.isPending} error={list.error} what="list clusters">
        {() =>
          list.data!.length === 0 ? (
            <p className="muted">No cluster you may see.</p>
          ) : (
            <table className="table">
              <caption className="visually-hidden">clusters</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Server</th>
                  <th scope="col">Project</th>
                  <th scope="col">Namespaces</th>
                  <th scope="col">Credential</th>
                  <th scope="col">
                    <span className="visually-hidden">actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data!.map((c) => (
                  <ClusterRow key={c.server} cluster={c} />
                ))}
              </tbody>
            </table>
          )
        }
      </QueryState>
    </section>
  );
}

function ClusterRow({ cluster: c }: { cluster: Cluster }) {
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: async () =>
      unwrap(await api.DELETE('/api/v1/clusters/{server}', { params: { path: { server: c.server } } })),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['clusters'] }),
  });
  const label = c.name || c.server;
  return (
    <tr>
      <td>{c.name}</td>
      <td className="mono">{c.server}</td>
      <td>{c.project || '—'}</td>
      <td>{(c.namespaces ?? []).join(', ') || 'all'}</td>
      <td>
        {c.credentialType ?? 'none'}
        {c.insecure ? ' (insecure)' : ''}
      </td>
      <td>
        <div className="row-actions">
          <ClusterFormDialog stored={c} />
          <ConfirmDelete
            title={`Remove the cluster ${label}`}
            description="Its stored credentials are deleted; Applications deploying there stop syncing."
            trigger="Remove"
            triggerLabel={`Remove ${label}`}
            pending={remove.isPending}
            error={remove.error}
            onConfirm={() => remove.mutateAsync()}
          />
        </div>
      </td>
    </tr>
  );
}
