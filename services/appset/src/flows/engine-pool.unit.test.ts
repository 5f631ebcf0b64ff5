// One set's template that runs out of time fails alone: the other generations, running at the same
// time on the pool's other engines or waiting for the same one, succeed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppSetError } from '@capstan/appset-engine';
import { EnginePool } from './engine-pool.js';

const set = (name: string, goTemplateName: string) => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'ApplicationSet',
  metadata: { name },
  spec: {
    goTemplate: true,
    generators: [{ list: { elements: [{ cluster: 'dev' }] } }],
    template: {
      metadata: { name: goTemplateName },
      spec: {
        project: 'default',
        source: { repoURL: 'https://git.example.com/a.git', path: 'g' },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'g' },
      },
    },
  },
});

const slow = set('slow', '{{ range until 100000000 }}{{ end }}x');
const quick = (i: number) => set(`quick-${i}`, `{{ .cluster }}-${i}`);

describe('engine pool', () => {
  let pool: EnginePool;
  beforeAll(async () => {
    pool = await EnginePool.load(2);
  }, 60_000);
  afterAll(async () => {
    await pool?.close();
  });

  it("keeps a set that exceeds the time limit from failing the others' generations", async () => {
    const [a, ...others] = await Promise.allSettled([
      pool.generate({ applicationSet: slow, limits: { timeoutMs: 500 } }),
      ...[1, 2, 3].map((i) => pool.generate({ applicationSet: quick(i), limits: { timeoutMs: 20_000 } })),
    ]);
    expect(a.status).toBe('rejected');
    expect((a as PromiseRejectedResult).reason).toBeInstanceOf(AppSetError);
    expect((a as PromiseRejectedResult).reason.message).toContain('took longer than 500 ms');
    expect(
      others.map((r) =>
        r.status === 'fulfilled' ? r.value.applications[0]!.metadata.name : String(r.reason),
      ),
    ).toEqual(['dev-1', 'dev-2', 'dev-3']);
  }, 60_000);
});
