import { describe, expect, it } from 'vitest';
import type { Application } from '../api/views';
import { applyFilters, emptyFilters, facetCounts, filtersFromQuery, filtersToQuery } from './filters';

const app = (name: string, project: string, sync: string, health: string, namespace = 'ns'): Application => ({
  metadata: { name },
  spec: { project, destination: { server: 'https://kubernetes.default.svc', namespace } },
  status: { sync: { status: sync }, health: { status: health } },
});

const apps = [
  app('guestbook', 'team-a', 'Synced', 'Healthy'),
  app('guestbook-dev', 'team-a', 'OutOfSync', 'Progressing', 'dev'),
  app('billing', 'team-b', 'OutOfSync', 'Degraded'),
];

describe('application filters', () => {
  it('narrows by each facet and by a name or project search', () => {
    const f = emptyFilters();
    f.sync.add('OutOfSync');
    expect(applyFilters(apps, f).map((a) => a.metadata.name)).toEqual(['guestbook-dev', 'billing']);
    f.search = 'TEAM-A';
    expect(applyFilters(apps, f).map((a) => a.metadata.name)).toEqual(['guestbook-dev']);
  });

  it("counts a facet's values over the list narrowed by the other facets only", () => {
    const f = emptyFilters();
    f.project.add('team-a');
    const counts = facetCounts(apps, f);
    expect(Object.fromEntries(counts.sync)).toEqual({ Synced: 1, OutOfSync: 1 });
    // The project facet itself still counts every project (picking team-b would show 1).
    expect(Object.fromEntries(counts.project)).toEqual({ 'team-a': 2, 'team-b': 1 });
  });

  it('round-trips through the URL query (a filtered view is a link)', () => {
    const f = emptyFilters();
    f.search = 'guest';
    f.health.add('Healthy').add('Degraded');
    const q = filtersToQuery(f);
    expect(q).toBe('search=guest&health=Degraded&health=Healthy');
    const back = filtersFromQuery(q);
    expect(back.search).toBe('guest');
    expect([...back.health].sort()).toEqual(['Degraded', 'Healthy']);
    expect(back.sync.size).toBe(0);
  });
});
