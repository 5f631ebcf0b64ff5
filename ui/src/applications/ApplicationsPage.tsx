// Applications: search, facet filters with counts (kept in the URL, so a view is a link), and the
// virtualised rows.
import { useMemo } from 'react';
import { useLocation, useSearch } from 'wouter';
import { QueryState } from '../app/QueryState';
import { useApplications } from './queries';
import { ApplicationRows } from './ApplicationRows';
import { ApplicationTiles } from './ApplicationTiles';
import {
  FACETS,
  applyFilters,
  facetCounts,
  filtersFromQuery,
  filtersToQuery,
  viewFromQuery,
  type Filters,
  type View,
} from './filters';
import type { Application } from '../api/views';

export function ApplicationsPage() {
  const apps = useApplications();
  return (
    <section className="page">
      <h1>Applications</h1>
      <QueryState isPending={apps.isPending} error={apps.error} what="list Applications">
        {() => <ApplicationsView apps={apps.data!} />}
      </QueryState>
    </section>
  );
}

export function ApplicationsView({ apps }: { apps: Application[] }) {
  const search = useSearch();
  const [location, navigate] = useLocation();
  const filters = useMemo(() => filtersFromQuery(search), [search]);
  const view = viewFromQuery(search);
  const shown = useMemo(() => applyFilters(apps, filters), [apps, filters]);
  const counts = useMemo(() => facetCounts(apps, filters), [apps, filters]);
  const update = (f: Filters, v: View = view) => {
    const q = filtersToQuery(f, v);
    navigate(q ? `${location}?${q}` : location, { replace: true });
  };
  const toggle = (facet: (typeof FACETS)[number], value: string) => {
    const next = { ...filters, [facet]: new Set(filters[facet]) };
    if (!next[facet].delete(value)) next[facet].add(value);
    update(next);
  };
  return (
    <div className="apps">
      <aside className="filters" aria-label="filters">
        <label htmlFor="search">Search</label>
        <input
          id="search"
          type="search"
          placeholder="name or project"
          value={filters.search}
          onChange={(e) => update({ ...filters, search: e.target.value })}
        />
        {FACETS.map((facet) => (
          <fieldset key={facet}>
            <legend>{facet}</legend>
            {[...counts[facet]]
              .sort(([a], [b]) => a.localeCompare(b))
              .slice(0, 50)
              .map(([value, n]) => (
                <label key={value} className="facet">
                  <input
                    type="checkbox"
                    checked={filters[facet].has(value)}
                    onChange={() => toggle(facet, value)}
                  />
                  <span>{value || '(none)'}</span> <span className="count">{n}</span>
                </label>
              ))}
          </fieldset>
        ))}
      </aside>
      <div className="list">
        <div className="list-head">
          <p className="summary" aria-live="polite">
            {shown.length} of {apps.length} Applications
          </p>
          <div className="toggle" role="group" aria-label="view">
            {(['list', 'tiles'] as const).map((v) => (
              <button
                key={v}
                type="button"
                className="button ghost"
                aria-pressed={view === v}
                onClick={() => update(filters, v)}
              >
                {v === 'list' ? 'List' : 'Tiles'}
              </button>
            ))}
          </div>
        </div>
        {view === 'tiles' ? <ApplicationTiles apps={shown} /> : <ApplicationRows apps={shown} />}
      </div>
    </div>
  );
}
