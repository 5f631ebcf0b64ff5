// What the whole parent chain lets this project's Applications do, as the api computes it (GET
// /api/v1/projects/{name}/effective-restrictions: effectiveRestrictions of @capstan/policy, the
// chain's own rules): the allowed entries with the link that declares each, every link's denies, and
// an entry its parents do not certainly allow marked with the reason. The UI intersects nothing.
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { QueryState } from '../app/QueryState';

export interface EffectiveEntry {
  value?: string;
  project?: string;
  deny?: boolean;
  boundedBy?: string;
  withheld?: boolean;
}

export interface Effective {
  chain?: string[];
  sourceRepos?: EffectiveEntry[];
  destinations?: EffectiveEntry[];
  clusterResources?: EffectiveEntry[];
  everyNamespacedResource?: boolean;
  namespaceResources?: EffectiveEntry[];
  destinationServiceAccounts?: EffectiveEntry[];
}

function Entries({ items, none }: { items: EffectiveEntry[]; none: string }) {
  if (items.length === 0) return <span className="muted">{none}</span>;
  return (
    <ul className="effective-entries">
      {items.map((e, i) => (
        <li key={i}>
          {e.withheld ? (
            <span className="muted">withheld (you may not get project {e.project})</span>
          ) : (
            <span className="mono">{e.value}</span>
          )}{' '}
          <span className="muted">from {e.project}</span>
          {e.boundedBy && <span className="warning"> — bounded by a parent: {e.boundedBy}</span>}
        </li>
      ))}
    </ul>
  );
}

function rows(r: Effective) {
  const allow = (xs?: EffectiveEntry[]) => (xs ?? []).filter((e) => !e.deny);
  const deny = (xs?: EffectiveEntry[]) => (xs ?? []).filter((e) => e.deny);
  return [
    ['Sources', allow(r.sourceRepos), 'none', deny(r.sourceRepos)],
    ['Destinations', allow(r.destinations), 'none', deny(r.destinations)],
    ['Cluster resources', allow(r.clusterResources), 'none', deny(r.clusterResources)],
    [
      'Namespaced resources',
      allow(r.namespaceResources),
      r.everyNamespacedResource ? 'every kind' : 'none',
      deny(r.namespaceResources),
    ],
    ['ServiceAccounts (nearest project first)', r.destinationServiceAccounts ?? [], 'the default one', []],
  ] as const;
}

export function EffectiveTable({ effective }: { effective: Effective }) {
  return (
    <table className="table effective">
      <caption>
        Effective restrictions: what every link of {(effective.chain ?? []).join(' → ')} allows together
      </caption>
      <thead>
        <tr>
          <th scope="col">Restriction</th>
          <th scope="col">Allowed</th>
          <th scope="col">Denied by a link</th>
        </tr>
      </thead>
      <tbody>
        {rows(effective).map(([what, allowed, none, denied]) => (
          <tr key={what}>
            <th scope="row">{what}</th>
            <td>
              <Entries items={[...allowed]} none={none} />
            </td>
            <td>
              <Entries items={[...denied]} none="—" />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function EffectiveRestrictions({ name }: { name: string }) {
  const q = useQuery({
    queryKey: ['project-effective', name],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/projects/{name}/effective-restrictions', { params: { path: { name } } }),
      ) as Effective,
  });
  return (
    <section aria-label="effective restrictions">
      <h2>Effective restrictions</h2>
      <p className="muted">
        The chain intersected by the api: a sync is allowed only when every link allows it. A ServiceAccount
        comes from the nearest project&apos;s first matching rule, which must agree with its parents&apos;.
      </p>
      <QueryState isPending={q.isPending} error={q.error} what={`read the effective restrictions of ${name}`}>
        {() => <EffectiveTable effective={q.data!} />}
      </QueryState>
    </section>
  );
}
