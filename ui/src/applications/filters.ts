// The list's filters and counts as plain functions (tested without a browser): each facet narrows
// the list, search matches a name or project substring, and the counts of a facet are taken over the
// list narrowed by every other facet (so a count says what picking that value would show).
import { clusterOf, healthOf, namespaceOf, projectOf, syncOf, type Application } from '../api/views';

export const FACETS = ['sync', 'health', 'project', 'cluster', 'namespace'] as const;
export type Facet = (typeof FACETS)[number];
export type Filters = { search: string } & Record<Facet, Set<string>>;

const valueOf: Record<Facet, (a: Application) => string> = {
  sync: syncOf,
  health: healthOf,
  project: projectOf,
  cluster: clusterOf,
  namespace: namespaceOf,
};

export function emptyFilters(): Filters {
  return {
    search: '',
    sync: new Set(),
    health: new Set(),
    project: new Set(),
    cluster: new Set(),
    namespace: new Set(),
  };
}

function matches(a: Application, f: Filters, except?: Facet): boolean {
  for (const facet of FACETS) {
    if (facet === except || f[facet].size === 0) continue;
    if (!f[facet].has(valueOf[facet](a))) return false;
  }
  const q = f.search.trim().toLowerCase();
  return !q || a.metadata.name.toLowerCase().includes(q) || projectOf(a).toLowerCase().includes(q);
}

export function applyFilters(apps: readonly Application[], f: Filters): Application[] {
  return apps.filter((a) => matches(a, f));
}

/** For each facet, how many Applications each value would show given the other facets. */
export function facetCounts(apps: readonly Application[], f: Filters): Record<Facet, Map<string, number>> {
  const out = Object.fromEntries(FACETS.map((k) => [k, new Map<string, number>()])) as Record<
    Facet,
    Map<string, number>
  >;
  for (const a of apps) {
    for (const facet of FACETS) {
      if (!matches(a, f, facet)) continue;
      const v = valueOf[facet](a);
      out[facet].set(v, (out[facet].get(v) ?? 0) + 1);
    }
  }
  return out;
}

/** The list's two layouts; the choice is in the URL with the filters. */
export type View = 'list' | 'tiles';

export const viewFromQuery = (query: string): View =>
  new URLSearchParams(query).get('view') === 'tiles' ? 'tiles' : 'list';

/** The filters (and a tiles view) as URL search parameters (deep links) and back. */
export function filtersToQuery(f: Filters, view: View = 'list'): string {
  const q = new URLSearchParams();
  if (view === 'tiles') q.set('view', 'tiles');
  if (f.search) q.set('search', f.search);
  for (const facet of FACETS) for (const v of [...f[facet]].sort()) q.append(facet, v);
  return q.toString();
}

export function filtersFromQuery(query: string): Filters {
  const q = new URLSearchParams(query);
  const f = emptyFilters();
  f.search = q.get('search') ?? '';
  for (const facet of FACETS) f[facet] = new Set(q.getAll(facet));
  return f;
}
