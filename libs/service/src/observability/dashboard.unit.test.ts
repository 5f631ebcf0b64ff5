// The Grafana dashboard in deploy/grafana is checked against what the services register: every
// metric named in a panel's PromQL is in the metric catalog (whose entries each service's /metrics
// is tested to expose) or among prom-client's default process metrics, and every label a selector
// matches on is one that metric has.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { metricCatalog } from './metrics.js';

const dashboardPath = fileURLToPath(
  new URL('../../../../deploy/grafana/capstan-dashboard.json', import.meta.url),
);

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

function known(): Map<string, { type: string; labels: readonly string[] }> {
  const out = new Map<string, { type: string; labels: readonly string[] }>();
  for (const d of Object.values(metricCatalog)) out.set(d.name, { type: d.type, labels: d.labels });
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  for (const m of defaults.getMetricsAsArray()) {
    const labels = (m as unknown as { labelNames?: string[] }).labelNames ?? [];
    out.set(m.name, { type: String(m.type), labels });
  }
  return out;
}

/** Labels every series has beside its own (Prometheus' target labels, the registry's default label). */
const TARGET_LABELS = ['service', 'instance', 'job', 'pod'];

/** The metric a series name belongs to (a histogram's _bucket, _sum and _count series included). */
function metricOfSeries(
  series: string,
  catalog: Map<string, { type: string; labels: readonly string[] }>,
): { name: string; labels: readonly string[] } | undefined {
  const exact = catalog.get(series);
  if (exact) return { name: series, labels: exact.labels };
  const m = /^(.*)_(bucket|sum|count)$/.exec(series);
  const base = m ? catalog.get(m[1]!) : undefined;
  if (!base || (base.type !== 'histogram' && base.type !== 'summary')) return undefined;
  return { name: m![1]!, labels: m![2] === 'bucket' ? [...base.labels, 'le'] : base.labels };
}

const dashboard = JSON.parse(readFileSync(dashboardPath, 'utf8')) as {
  panels: Panel[];
  templating: { list: { name: string; query?: unknown }[] };
};
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

describe('deploy/grafana/capstan-dashboard.json', () => {
  const catalog = known();

  it('has panels with queries', () => {
    expect(panels.filter((p) => p.type !== 'row').length).toBeGreaterThan(20);
    expect(exprs.length).toBeGreaterThan(20);
  });

  it('names in its queries only metrics the services register', () => {
    const unknown: string[] = [];
    for (const { panel, expr } of exprs) {
      const names = expr.match(/\b(?:capstan|process|nodejs)_[a-z0-9_]+/g) ?? [];
      expect(names.length, `${panel}: ${expr}`).toBeGreaterThan(0);
      for (const n of names) if (!metricOfSeries(n, catalog)) unknown.push(`${panel}: ${n}`);
    }
    expect(unknown).toEqual([]);
  });

  it('matches each metric only on labels that metric has', () => {
    const wrong: string[] = [];
    for (const { panel, expr } of exprs) {
      for (const m of expr.matchAll(/\b((?:capstan|process|nodejs)_[a-z0-9_]+)\{([^}]*)\}/g)) {
        const metric = metricOfSeries(m[1]!, catalog);
        const labels = [...m[2]!.matchAll(/([a-z_]+)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!);
        for (const l of labels)
          if (!metric?.labels.includes(l) && !TARGET_LABELS.includes(l))
            wrong.push(`${panel}: ${m[1]}{${l}}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('takes its variables from labels capstan_app_info has', () => {
    const info = metricCatalog.appInfo.labels as readonly string[];
    const queries = dashboard.templating.list
      .map((v) => (v.query as { query?: string } | undefined)?.query)
      .filter((q): q is string => typeof q === 'string');
    expect(queries.length).toBe(3);
    for (const q of queries) {
      const m = /^label_values\(capstan_app_info, ([a-z_]+)\)$/.exec(q);
      expect(m && info.includes(m[1]!), q).toBe(true);
    }
  });
});
