import { describe, expect, it } from 'vitest';
import { ApplicationSchema } from '@capstan/policy';
import {
  automatedOperationId,
  decideAutomation,
  DEFAULT_SELF_HEAL,
  revisionKey,
  selfHealDelayMs,
  type AutomationInput,
  type LastSync,
} from './automation.js';
import type { Verdict } from './verdict.js';

const app = (automated: Record<string, unknown> | undefined, metadata: Record<string, unknown> = {}) =>
  ApplicationSchema.parse({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'guestbook', namespace: 'argocd', ...metadata },
    spec: {
      project: 'team-a',
      source: { repoURL: 'https://git.example.com/apps.git', path: 'guestbook' },
      destination: { server: 'https://x', namespace: 'team-a' },
      ...(automated ? { syncPolicy: { automated } } : {}),
    },
  });
const outOfSync = (
  resources: Partial<Verdict['resources'][number]>[] = [{ status: 'OutOfSync' }],
): Verdict => ({
  sync: { status: 'OutOfSync', revision: 'r2' },
  health: { status: 'Healthy' },
  resources: resources.map((r, i) => ({
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    namespace: 'team-a',
    name: `c${i}`,
    status: 'OutOfSync',
    ...r,
  })),
});
const now = new Date('2026-11-25T10:00:00Z');
const last = (over: Partial<LastSync> = {}): LastSync => ({
  revision: 'r2',
  specHash: 'spec',
  succeeded: true,
  finishedAt: new Date(now.getTime() - 1_000),
  selfHealAttempts: 0,
  operationId: 'op-1',
  ...over,
});
const input = (over: Partial<AutomationInput>): AutomationInput => ({
  app: app({}),
  verdict: outOfSync(),
  specHash: 'spec',
  inFlight: false,
  lastSync: undefined,
  now,
  selfHeal: DEFAULT_SELF_HEAL,
  ...over,
});

describe("automated sync (Argo CD's autoSync)", () => {
  it('given a new automated Application that is OutOfSync and never synced, when reconciled, then it is synced at the compared revision', () => {
    expect(decideAutomation(input({}))).toEqual({
      action: 'sync',
      trigger: 'automated',
      revision: 'r2',
      prune: false,
      selfHealAttempts: 0,
    });
  });

  it('given an Application without automation, disabled, being deleted, Synced, Unknown or with a sync in flight, when reconciled, then nothing is synced', () => {
    expect(decideAutomation(input({ app: app(undefined) })).action).toBe('none');
    expect(decideAutomation(input({ app: app({ enabled: false, selfHeal: true }) })).action).toBe('none');
    expect(decideAutomation(input({ app: app({}, { deletionTimestamp: '2026-11-25T09:00:00Z' }) }))).toEqual({
      action: 'none',
      reason: 'deletion in progress',
    });
    expect(decideAutomation(input({ verdict: { ...outOfSync(), sync: { status: 'Synced' } } })).action).toBe(
      'none',
    );
    expect(decideAutomation(input({ verdict: { ...outOfSync(), sync: { status: 'Unknown' } } })).action).toBe(
      'none',
    );
    expect(decideAutomation(input({ inFlight: true }))).toEqual({
      action: 'none',
      reason: 'another operation is in progress',
    });
  });

  it('given the last sync was to the same revision and spec, when drift appears without selfHeal, then it is not synced again', () => {
    expect(decideAutomation(input({ lastSync: last() }))).toEqual({
      action: 'none',
      reason: 'most recent sync already to [r2]',
    });
    // A new revision, or a changed spec, is a new attempt.
    expect(decideAutomation(input({ lastSync: last({ revision: 'r1' }) })).action).toBe('sync');
    expect(decideAutomation(input({ lastSync: last({ specHash: 'old' }) })).action).toBe('sync');
  });

  it('given a failed last attempt at the same revision, when reconciled, then it is refused with Argo CD message', () => {
    expect(decideAutomation(input({ lastSync: last({ succeeded: false }) }))).toEqual({
      action: 'refuse',
      message: 'Failed last sync attempt to [r2]: automated sync is not retried for the same revision',
    });
  });

  it('given selfHeal, when drift appears after a sync, then it is synced again after the backoff, attempt by attempt', () => {
    const heal = app({ selfHeal: true });
    // The first self-heal is at once; the next waits 2 s, then 6 s, 18 s … capped at 5 min.
    expect(decideAutomation(input({ app: heal, lastSync: last() }))).toMatchObject({
      action: 'sync',
      trigger: 'self-heal',
      selfHealAttempts: 1,
    });
    expect(decideAutomation(input({ app: heal, lastSync: last({ selfHealAttempts: 1 }) }))).toEqual({
      action: 'wait',
      inMs: 1_000,
      reason: 'self-heal backoff (attempt 2)',
    });
    expect(
      decideAutomation(
        input({
          app: heal,
          lastSync: last({ selfHealAttempts: 1, finishedAt: new Date(now.getTime() - 2_000) }),
        }),
      ),
    ).toMatchObject({ action: 'sync', trigger: 'self-heal', selfHealAttempts: 2 });
    expect([1, 2, 3, 7, 8].map((n) => selfHealDelayMs(DEFAULT_SELF_HEAL, n))).toEqual([
      2_000, 6_000, 18_000, 300_000, 300_000,
    ]);
    // Without the backoff, Argo's fixed --self-heal-timeout-seconds.
    expect(selfHealDelayMs({ ...DEFAULT_SELF_HEAL, backoffMs: 0 }, 0)).toBe(5_000);
  });

  it('given automated prune, when everything live would be pruned and allowEmpty is off, then it is refused; allowEmpty lets it through', () => {
    const all = outOfSync([{ requiresPruning: true }, { requiresPruning: true }]);
    expect(decideAutomation(input({ app: app({ prune: true }), verdict: all }))).toEqual({
      action: 'refuse',
      message: 'Skipping sync attempt to [r2]: auto-sync will wipe out all resources',
    });
    expect(
      decideAutomation(input({ app: app({ prune: true, allowEmpty: true }), verdict: all })),
    ).toMatchObject({
      action: 'sync',
      prune: true,
    });
  });

  it('given only resources to prune and automated prune off, when reconciled, then nothing is synced (Argo CD)', () => {
    const onlyPrune = outOfSync([{ status: 'Synced' }, { requiresPruning: true }]);
    expect(decideAutomation(input({ verdict: onlyPrune }))).toEqual({
      action: 'none',
      reason: 'need to prune extra resources only but automated prune is disabled',
    });
  });

  it('given the same decision reached twice, when naming the operation, then the ids are equal (queued once); a self-heal after another sync gets a new one', () => {
    const ref = { namespace: 'argocd', name: 'guestbook' };
    const d = {
      action: 'sync',
      trigger: 'automated',
      revision: 'r2',
      prune: false,
      selfHealAttempts: 0,
    } as const;
    expect(automatedOperationId(ref, d, 'spec', undefined)).toBe(
      automatedOperationId(ref, d, 'spec', last()),
    );
    const h = { ...d, trigger: 'self-heal', selfHealAttempts: 1 } as const;
    expect(automatedOperationId(ref, h, 'spec', last())).toBe(automatedOperationId(ref, h, 'spec', last()));
    expect(automatedOperationId(ref, h, 'spec', last())).not.toBe(
      automatedOperationId(ref, h, 'spec', last({ operationId: 'op-2' })),
    );
  });

  it('syncs a multi-source Application again when any source has a new commit, pinning every source', () => {
    const multi: Verdict = {
      ...outOfSync(),
      sync: { status: 'OutOfSync', revision: 'a1', revisions: ['a1', 'b2'] },
    };
    expect(revisionKey(multi.sync)).toBe('a1,b2');
    // The last sync was at a1 and b1: the first source's revision alone has not changed.
    const d = decideAutomation(input({ verdict: multi, lastSync: last({ revision: 'a1,b1' }) }));
    expect(d).toMatchObject({
      action: 'sync',
      trigger: 'automated',
      revision: 'a1,b2',
      revisions: ['a1', 'b2'],
    });
    expect(decideAutomation(input({ verdict: multi, lastSync: last({ revision: 'a1,b2' }) }))).toMatchObject({
      action: 'none',
    });
    if (d.action !== 'sync') throw new Error('sync expected');
    const id = automatedOperationId(
      { namespace: 'argocd', name: 'guestbook' },
      d,
      'spec'.repeat(8),
      undefined,
    );
    expect(id.length).toBeLessThanOrEqual(128);
  });
});
