// Deployments (status.history) with rollback to any of them (Argo CD's rollback: a sync to that
// entry's revision; the api refuses it while automated sync is on, and says so).
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { Application } from '../api/views';
import { applicationKey } from './queries';
import { ErrorAlert } from '../forms/DialogParts';

export function HistoryTab({ app }: { app: Application }) {
  const qc = useQueryClient();
  const { name, namespace = '' } = app.metadata;
  const rollback = useMutation({
    mutationFn: async (id: number) =>
      unwrap(
        await api.POST('/api/v1/applications/{name}/rollback', {
          params: { path: { name } },
          body: { name, id, appNamespace: namespace },
        }),
      ) as { application?: Application },
    onSuccess: (r) => r.application && qc.setQueryData(applicationKey(namespace, name), r.application),
  });
  const history = [...(app.status?.history ?? [])].reverse();
  if (history.length === 0) return <p className="muted">No deployment yet.</p>;
  return (
    <>
      <ErrorAlert error={rollback.error} />
      <table className="table">
        <caption className="visually-hidden">deployments, newest first</caption>
        <thead>
          <tr>
            <th scope="col">ID</th>
            <th scope="col">Revision</th>
            <th scope="col">Deployed</th>
            <th scope="col">
              <span className="visually-hidden">actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {history.map((h) => (
            <tr key={String(h.id)}>
              <td>{String(h.id ?? '')}</td>
              <td className="mono">{h.revision?.slice(0, 12)}</td>
              <td>{h.deployedAt ? new Date(h.deployedAt).toLocaleString() : ''}</td>
              <td>
                <button
                  type="button"
                  className="button ghost"
                  disabled={rollback.isPending}
                  onClick={() => rollback.mutate(Number(h.id ?? 0))}
                >
                  Rollback
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
