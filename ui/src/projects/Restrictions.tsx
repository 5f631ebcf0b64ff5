// One project's own restrictions (sources, destinations, ServiceAccounts, cluster resources).
import type { Project } from './chain';

const list = (xs: string[]) => xs.join(', ') || '—';

export function restrictionsOf(p: Project) {
  const s = p.spec;
  return [
    ['Sources', list(s.sourceRepos ?? [])],
    [
      'Destinations',
      list((s.destinations ?? []).map((d) => `${d.server || d.name || ''} / ${d.namespace ?? ''}`)),
    ],
    [
      'ServiceAccounts',
      list(
        (s.destinationServiceAccounts ?? []).map(
          (d) => `${d.server ?? ''} / ${d.namespace ?? ''} → ${d.defaultServiceAccount ?? ''}`,
        ),
      ),
    ],
    [
      'Cluster resources',
      list((s.clusterResourceWhitelist ?? []).map((g) => `${g.group || 'core'}/${g.kind ?? ''}`)),
    ],
  ] as const;
}

export function Restrictions({ project, compact }: { project: Project; compact?: boolean }) {
  return (
    <dl className={compact ? 'facts compact' : 'facts'}>
      {restrictionsOf(project).map(([k, v]) => (
        <div key={k} className="fact">
          <dt>{k}</dt>
          <dd className="mono">{v}</dd>
        </div>
      ))}
    </dl>
  );
}
