// The appset service's metrics: Argo CD's ApplicationSet-controller metrics under `capstan_`, same
// labels (libs/service metric catalog). The info gauges are read from the sets' read model at each
// scrape (one query, bounded by the number of sets), so a deleted set is no longer reported.
import { sql, type Kysely } from 'kysely';
import { metricOf, type Logger, type MetricsRegistry } from '@capstan/service';
import type { AppSetDatabase } from '../sets/appset.table.js';

export class AppSetMetrics {
  private readonly reconciles;

  constructor(registry: MetricsRegistry, db: Kysely<AppSetDatabase>, logger: Logger) {
    this.reconciles = metricOf(registry, 'appsetReconcile');
    // Both gauges from one query per scrape: the owned-applications collector reads what info read.
    let latest: Promise<SetRow[]> = Promise.resolve([]);
    metricOf(registry, 'appsetInfo', {
      async collect() {
        this.reset();
        latest = setRows(db).catch((err: unknown) => {
          logger.warn({ err: (err as Error).message }, 'collecting capstan_appset_info failed');
          return [];
        });
        for (const r of await latest)
          this.set({ namespace: r.namespace, name: r.name, resource_update_status: r.status }, 1);
      },
    });
    metricOf(registry, 'appsetOwnedApplications', {
      async collect() {
        this.reset();
        for (const r of await latest) this.set({ namespace: r.namespace, name: r.name }, r.owned);
      },
    });
  }

  /** Times one reconcile of one set (`gone`, a set deleted meanwhile, is not counted). */
  async reconcile<T>(key: { namespace: string; name: string }, run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const out = await run();
    if (out !== 'gone') this.reconciles.observe(key, (performance.now() - started) / 1000);
    return out;
  }
}

interface SetRow {
  namespace: string;
  name: string;
  /** The ResourcesUpToDate condition's reason, Argo CD's `resource_update_status` (Unknown without one). */
  status: string;
  owned: number;
}

async function setRows(db: Kysely<AppSetDatabase>): Promise<SetRow[]> {
  const { rows } = await sql<{ namespace: string; name: string; status: string | null; owned: number }>`
    select namespace, name,
      (select c->>'reason' from jsonb_array_elements(coalesce(status->'conditions', '[]'::jsonb)) c
        where c->>'type' = 'ResourcesUpToDate' limit 1) as status,
      jsonb_array_length(coalesce(status->'resources', '[]'::jsonb))::int as owned
    from appset.application_sets`.execute(db);
  return rows.map((r) => ({ ...r, status: r.status ?? 'Unknown' }));
}
