import { describe, expect, it } from 'vitest';
import { compileIgnoreDifferences } from '@capstan/diff';
import { createHealthAssessor, type HealthAssessor } from '@capstan/health';
import { fingerprintOf, unknownVerdict, verdictOf, type ResourcePair } from './verdict.js';

const cm = (name: string, data: Record<string, string>, annotations: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'team-a', annotations },
  data,
});
const pair = (name: string, desired: unknown, live: unknown): ResourcePair => ({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  namespace: 'team-a',
  name,
  desired: desired as ResourcePair['desired'],
  live: live as ResourcePair['live'],
});

const verdict = async (pairs: ResourcePair[], health?: HealthAssessor) =>
  verdictOf({
    pairs,
    revision: 'abc',
    ignore: await compileIgnoreDifferences([]),
    health: health ?? (await createHealthAssessor()),
    fieldManager: 'capstan',
  });

describe("the reconciler's verdict on an Application", () => {
  it('given every declared object live as declared, when compared, then the Application is Synced and Healthy at the revision', async () => {
    const v = await verdict([pair('a', cm('a', { k: 'v' }), cm('a', { k: 'v' }))]);
    expect(v.sync).toEqual({ status: 'Synced', revision: 'abc' });
    expect(v.health.status).toBe('Healthy');
    expect(v.resources).toEqual([expect.objectContaining({ name: 'a', status: 'Synced' })]);
  });

  it('given a live object edited by hand, when compared, then it and the Application are OutOfSync', async () => {
    const v = await verdict([
      pair('a', cm('a', { k: 'v' }), cm('a', { k: 'edited' })),
      pair('b', cm('b', { k: 'v' }), cm('b', { k: 'v' })),
    ]);
    expect(v.sync.status).toBe('OutOfSync');
    expect(v.resources.map((r) => [r.name, r.status])).toEqual([
      ['a', 'OutOfSync'],
      ['b', 'Synced'],
    ]);
  });

  it('given a declared object that is not live, when compared, then it is OutOfSync and Missing, and an Application with nothing live is Missing', async () => {
    const v = await verdict([pair('a', cm('a', {}), undefined)]);
    expect(v.sync.status).toBe('OutOfSync');
    expect(v.resources[0]).toMatchObject({ status: 'OutOfSync', health: { status: 'Missing' } });
    expect(v.health.status).toBe('Missing');
    // With something live, a missing object does not make the Application Missing (Argo CD).
    const some = await verdict([pair('a', cm('a', {}), undefined), pair('b', cm('b', {}), cm('b', {}))]);
    expect(some.health.status).toBe('Healthy');
  });

  it('given a live object the Application owns but git no longer declares, when compared, then it requires pruning and the Application is OutOfSync unless IgnoreExtraneous', async () => {
    const v = await verdict([pair('a', cm('a', {}), cm('a', {})), pair('old', undefined, cm('old', {}))]);
    expect(v.sync.status).toBe('OutOfSync');
    expect(v.resources.find((r) => r.name === 'old')).toMatchObject({
      status: 'OutOfSync',
      requiresPruning: true,
    });
    const ignored = await verdict([
      pair('a', cm('a', {}), cm('a', {})),
      pair(
        'old',
        undefined,
        cm('old', {}, { 'argocd.argoproj.io/compare-options': 'ServerSideDiff=true, IgnoreExtraneous' }),
      ),
    ]);
    expect(ignored.sync.status).toBe('Synced');
    expect(ignored.resources.find((r) => r.name === 'old')).toMatchObject({ requiresPruning: true });
  });

  it('given resources of different health, when aggregated, then the worst decides and names its cause; ignore-healthcheck leaves one out', async () => {
    const byName: HealthAssessor = {
      assess: (o) =>
        o === undefined
          ? { status: 'Missing' }
          : (o.metadata as { name: string }).name === 'bad'
            ? { status: 'Degraded', message: 'crash loop' }
            : { status: 'Progressing' },
    };
    const v = await verdict(
      [pair('ok', cm('ok', {}), cm('ok', {})), pair('bad', cm('bad', {}), cm('bad', {}))],
      byName,
    );
    expect(v.health).toEqual({ status: 'Degraded', message: 'crash loop' });
    const ignored = await verdict(
      [
        pair('ok', cm('ok', {}), cm('ok', {})),
        pair('bad', cm('bad', {}), cm('bad', {}, { 'argocd.argoproj.io/ignore-healthcheck': 'true' })),
      ],
      byName,
    );
    expect(ignored.health.status).toBe('Progressing');
  });

  it('given the same verdict reached twice in another order, when fingerprinted, then the fingerprints are equal; a changed resource changes it', async () => {
    const a = await verdict([pair('a', cm('a', {}), cm('a', {})), pair('b', cm('b', {}), cm('b', {}))]);
    const b = await verdict([pair('b', cm('b', {}), cm('b', {})), pair('a', cm('a', {}), cm('a', {}))]);
    expect(fingerprintOf(a)).toBe(fingerprintOf(b));
    const c = await verdict([
      pair('a', cm('a', { k: 'v' }), cm('a', { k: 'edited' })),
      pair('b', cm('b', {}), cm('b', {})),
    ]);
    expect(fingerprintOf(c)).not.toBe(fingerprintOf(a));
  });

  it('given a comparison that could not be made, when reported, then it is Unknown with the reason', () => {
    expect(unknownVerdict('system:serviceaccount:team-a:reader may not watch configmaps', 'abc')).toEqual({
      sync: { status: 'Unknown', revision: 'abc' },
      health: { status: 'Unknown' },
      message: 'system:serviceaccount:team-a:reader may not watch configmaps',
      resources: [],
    });
  });
});
