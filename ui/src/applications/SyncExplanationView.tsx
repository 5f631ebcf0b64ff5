// Who the next sync of an Application will write as, and why, decided now: the sync service's
// explainSync (GET /api/v1/applications/{name}/sync-explanation; what `capstan sync explain`
// prints): the identity or the refusal, every check with the project whose restriction decided, the
// project chain and the destinationServiceAccounts rules considered in order.
import type { SyncExplanation } from '../api/live-views';

const matchText = (r: NonNullable<SyncExplanation['rules']>[number]) =>
  r.firstMatch
    ? '✔ first match'
    : r.serverMatched && r.namespaceMatched
      ? 'matches (shadowed)'
      : r.serverMatched
        ? 'namespace differs'
        : 'server differs';

export function SyncExplanationView({ e }: { e: SyncExplanation }) {
  const denied = (e.checks ?? []).filter((c) => !c.allowed);
  const who =
    e.identity === 'control-plane' ? 'the control plane credentials of the cluster' : e.username || '—';
  return (
    <section className="identity" aria-labelledby="next-sync">
      <h2 id="next-sync">Who the next sync will write as</h2>
      <p className={e.allowed ? 'chain ok' : 'chain broken'}>
        <span aria-hidden="true">{e.allowed ? '✔' : '✖'}</span>{' '}
        {e.allowed ? (
          <>
            Will write as <strong className="mono">{who}</strong>
          </>
        ) : (
          <>Would be refused</>
        )}{' '}
        — {e.reason}
      </p>
      <dl className="facts">
        <dt>Decided</dt>
        <dd>{e.evaluatedAt ? new Date(e.evaluatedAt).toLocaleString() : 'now'} (by the sync service, now)</dd>
        <dt>Destination</dt>
        <dd className="mono">
          {e.destination?.server || e.destination?.name} / {e.destination?.namespace}
        </dd>
        <dt>Project chain</dt>
        <dd>{(e.projectChain?.length ? e.projectChain : [e.project]).join(' → ')}</dd>
        <dt>Impersonation</dt>
        <dd>
          {e.impersonation ? 'on' : 'off'}
          {e.strict ? ', strict' : ''}
          {e.fallback ? `, fallback: ${e.fallback}` : ''}
        </dd>
      </dl>
      {denied.length > 0 && (
        <ul className="denials" aria-label="what denies">
          {denied.map((c) => (
            <li key={`${c.check}-${c.reason}`}>
              <strong>{c.check}</strong>
              {c.project ? ` (project ${c.project})` : ''}: {c.reason}
            </li>
          ))}
        </ul>
      )}
      {(e.rules ?? []).length > 0 && (
        <table className="table">
          <caption>destinationServiceAccounts rules of the chain, in order</caption>
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">#</th>
              <th scope="col">Server</th>
              <th scope="col">Namespace</th>
              <th scope="col">ServiceAccount</th>
              <th scope="col">Match</th>
            </tr>
          </thead>
          <tbody>
            {(e.rules ?? []).map((r) => (
              <tr key={`${r.project}-${r.index ?? 0}`} className={r.firstMatch ? 'matched' : undefined}>
                <td>{r.project}</td>
                <td>{r.index ?? 0}</td>
                {r.withheld ? (
                  <td colSpan={3} className="muted">
                    withheld: you may not get project {r.project}
                  </td>
                ) : (
                  <>
                    <td className="mono">{r.server}</td>
                    <td className="mono">{r.namespace}</td>
                    <td className="mono">{r.defaultServiceAccount}</td>
                  </>
                )}
                <td>{matchText(r)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(e.warnings ?? []).map((w) => (
        <p key={w} className="muted">
          warning: {w}
        </p>
      ))}
    </section>
  );
}
