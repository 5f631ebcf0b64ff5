// Bounds: objects of a few MiB and long keyed lists with managed fields compare in linear work
// (the test's default timeout is the only clock here; no timing is asserted), and nesting deeper
// than any Kubernetes object needs does not exhaust the stack.
import { describe, expect, it } from 'vitest';
import { compareResource } from './compare.js';
import type { KubeObjectLike } from './types.js';

const FM = { fieldManager: 'capstan' };

describe('compareResource bounds', () => {
  it('compares a ~4 MiB object with a 20,000-item keyed list and its managed fields', () => {
    const env = Array.from({ length: 20_000 }, (_, i) => ({ name: `VAR_${i}`, value: 'x'.repeat(150) }));
    const desired: KubeObjectLike = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', env }] },
    };
    const live = structuredClone(desired) as KubeObjectLike & {
      spec: { containers: { env: { value: string }[] }[] };
    };
    const owned: Record<string, object> = {};
    for (const item of env) owned[`k:{"name":"${item.name}"}`] = { '.': {}, 'f:name': {}, 'f:value': {} };
    live.metadata!.managedFields = [
      {
        manager: 'capstan',
        fieldsV1: { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:env': owned } } } },
      },
    ];
    live.spec.containers[0]!.env[19_999]!.value = 'changed';
    expect(JSON.stringify(live).length).toBeGreaterThan(3_000_000);
    expect(compareResource(desired, live, FM).differences).toEqual(['/spec/containers/0/env/19999/value']);
  });

  it('compares nesting deeper than its recursion bound as whole values', () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 1000; i++) deep = { n: deep };
    const desired = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, spec: deep };
    expect(compareResource(desired, structuredClone(desired), FM).status).toBe('Synced');
    const changed = JSON.parse(JSON.stringify(desired).replace('"leaf":1', '"leaf":2')) as KubeObjectLike;
    expect(compareResource(desired, changed, FM).status).toBe('OutOfSync');
  });
});
