// Who this Application's sync writes as, and why: first the decision the sync service makes now
// for the next sync (SyncExplanationView: explainSync, what `capstan sync explain` prints), then the
// decision the audit trail recorded at the last sync (the destinationServiceAccounts rules considered
// and which matched, the project chain, the ServiceAccount or the refusal and its reason).
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { QueryState } from '../app/QueryState';
import type { Application } from '../api/views';
import type { AuditRow } from '../audit/audit-query';
import type { SyncExplanation } from '../api/live-views';
import { SyncExplanationView } from './SyncExplanationView';

interface Rule {
  index: number;
  server: string;
  namespace: string;
  defaultServiceAccount: string;
  matched: boolean;
  project?: string;
}

interface Decision {
  application?: string;
  project?: string;
  project_chain?: string[];
  destination_server?: string | null;
  destination_namespace?: string | null;
  impersonation?: boolean;
  strict_mode?: boolean;
  rules_considered?: Rule[];
  service_account?: string | null;
  username?: string | null;
  fallback?: string | null;
  decision?: string;
  reason?: string;
  revision?: string | null;
  actor?: string;
}

export function IdentityTab({ app }: { app: Application }) {
  const { name, namespace = '' } = app.metadata;
  const next = useQuery({
    queryKey: ['explain', namespace, name, app.spec],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/applications/{name}/sync-explanation', {
          params: { path: { name }, query: { appNamespace: namespace } },
        }),
      ) as SyncExplanation,
  });
  return (
    <>
      <QueryState isPending={next.isPending} error={next.error} what="explain this Application's next sync">
        {() => <SyncExplanationView e={next.data!} />}
      </QueryState>
      <h2>Last recorded decision</h2>
      <RecordedDecision app={app} />
    </>
  );
}

function RecordedDecision({ app }: { app: Application }) {
  const { name, namespace = '' } = app.metadata;
  const rows = useQuery({
    queryKey: ['identity', namespace, name],
    queryFn: async () => {
      const res = unwrap(
        await api.GET('/api/v1/audit/{table}', {
          params: { path: { table: 'sync_decisions' }, query: { application: name, limit: 20 } },
        }),
      ) as { rows?: AuditRow[] };
      return (res.rows ?? []).filter((r) =>
        [name, `${namespace}/${name}`].includes(String(r.fields?.application)),
      );
    },
  });
  return (
    <QueryState isPending={rows.isPending} error={rows.error} what="read this Application's sync decisions">
      {() => {
        const last = rows.data?.[0];
        if (!last)
          return <p className="muted">No sync yet: the decision is made and recorded at the first sync.</p>;
        return <DecisionView d={last.fields as Decision} time={last.time} id={last.id} />;
      }}
    </QueryState>
  );
}

function DecisionView({ d, time, id }: { d: Decision; time: string; id: number }) {
  const allowed = d.decision === 'allow';
  return (
    <div className="identity">
      <p className={allowed ? 'chain ok' : 'chain broken'}>
        <span aria-hidden="true">{allowed ? '✔' : '✖'}</span>{' '}
        {allowed ? (
          <>
            Writes as{' '}
            <strong className="mono">{d.username ?? d.service_account ?? 'the control plane'}</strong>
          </>
        ) : (
          <>Refused</>
        )}{' '}
        — {d.reason}
      </p>
      <dl className="facts">
        <dt>Decided</dt>
        <dd>
          {new Date(time).toLocaleString()} (audit row {id}, sync by {d.actor})
        </dd>
        <dt>Destination</dt>
        <dd className="mono">
          {d.destination_server} / {d.destination_namespace}
        </dd>
        <dt>Project chain</dt>
        <dd>{(d.project_chain?.length ? d.project_chain : [d.project]).join(' → ')}</dd>
        <dt>Impersonation</dt>
        <dd>
          {d.impersonation ? 'on' : 'off'}
          {d.strict_mode ? ', strict' : ''}
          {d.fallback ? `, fallback: ${d.fallback}` : ''}
        </dd>
      </dl>
      <table className="table">
        <caption>destinationServiceAccounts rules considered, in order</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Project</th>
            <th scope="col">Server</th>
            <th scope="col">Namespace</th>
            <th scope="col">ServiceAccount</th>
            <th scope="col">Matched</th>
          </tr>
        </thead>
        <tbody>
          {(d.rules_considered ?? []).map((r) => (
            <tr key={`${r.project ?? ''}-${r.index}`} className={r.matched ? 'matched' : undefined}>
              <td>{r.index}</td>
              <td>{r.project ?? d.project}</td>
              <td className="mono">{r.server}</td>
              <td className="mono">{r.namespace}</td>
              <td className="mono">{r.defaultServiceAccount}</td>
              <td>{r.matched ? '✔ matched' : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
