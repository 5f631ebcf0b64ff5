// The appset service's /metrics, scraped over HTTP from its ops port after real work: sets created
// and deleted through its gRPC API on the real PostgreSQL and NATS, reconciled by its reconciler.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredMetrics, metricsOf, parseMetricsText, sampleValue } from '@capstan/service';
import { startHarness, type Harness } from '../test-support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ CAPSTAN_RECONCILE_TICK_MS: '200' });
}, 120_000);
afterAll(async () => h?.stop());

const delegations = { api: 'caller-api', repo: 'caller-repo' };
const manifest = (name: string, elements: Record<string, string>[]) =>
  JSON.stringify({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name },
    spec: {
      generators: [{ list: { elements } }],
      template: {
        metadata: { name: `{{cluster}}-${name}` },
        spec: {
          project: 'team-a',
          source: {
            repoURL: 'https://git.example.com/team-a/apps.git',
            path: 'guestbook',
            targetRevision: 'HEAD',
          },
          destination: { server: 'https://kubernetes.default.svc', namespace: 'team-a-{{cluster}}' },
        },
      },
    },
  });

async function scrape(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${h.service.opsPort}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

describe('appset service /metrics', () => {
  it("reports each set with Argo CD's labels, the Applications it owns and its reconciles", async () => {
    await h.call((c) => c.upsert, {
      manifestJson: manifest('metered', [{ cluster: 'dev' }, { cluster: 'prod' }, { cluster: 'qa' }]),
      upsert: false,
      dryRun: false,
      delegations,
    });
    const key = { namespace: 'argocd', name: 'metered' };
    await h.handles.reconciler.reconcile(key);
    await h.handles.reconciler.reconcile(key);
    const text = await scrape();
    const samples = parseMetricsText(text);
    expect(
      sampleValue(samples, 'capstan_appset_info', {
        ...key,
        resource_update_status: 'ApplicationSetUpToDate',
      }),
    ).toBe(1);
    expect(sampleValue(samples, 'capstan_appset_owned_applications', key)).toBe(3);
    expect(sampleValue(samples, 'capstan_appset_reconcile_count', key)).toBeGreaterThanOrEqual(2);
    const declared = declaredMetrics(text);
    for (const m of metricsOf('appset')) expect(declared.get(m.name), m.name).toBe(m.type);
  });

  it('reports a deleted set no more, the others still', async () => {
    await h.call((c) => c.upsert, {
      manifestJson: manifest('other', [{ cluster: 'dev' }]),
      upsert: false,
      dryRun: false,
      delegations,
    });
    await h.call((c) => c.delete, { name: 'metered', namespace: '', delegations });
    const samples = parseMetricsText(await scrape());
    expect(sampleValue(samples, 'capstan_appset_info', { name: 'metered' })).toBe(0);
    expect(sampleValue(samples, 'capstan_appset_info', { name: 'other', namespace: 'argocd' })).toBe(1);
    expect(sampleValue(samples, 'capstan_appset_owned_applications', { name: 'other' })).toBe(1);
  });
});
