import { describe, expect, it } from 'vitest';
import { controllerStatus, statusChanged, unpullable, type Workload } from './workload-status.js';

const deployment = (image: string, extra: Record<string, unknown> = {}): Workload => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team-a', generation: 3 },
  spec: { replicas: 2, template: { spec: { containers: [{ name: 'web', image }] } }, ...extra },
});

const conditionOf = (s: Record<string, unknown> | undefined, type: string) =>
  (s?.conditions as { type: string; status: string; reason: string; message: string }[]).find(
    (c) => c.type === type,
  );

describe('what the workload controllers would write', () => {
  it('a Deployment whose image pulls is available at its generation', () => {
    const s = controllerStatus(deployment('nginx:1.27'), { firstSeen: 0, now: 1_000 });
    expect(s).toMatchObject({ observedGeneration: 3, replicas: 2, updatedReplicas: 2, availableReplicas: 2 });
    expect(conditionOf(s, 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    expect(conditionOf(s, 'Progressing')?.reason).toBe('NewReplicaSetAvailable');
  });

  it('a Deployment whose image never pulls progresses until its deadline, then exceeds it', () => {
    const w = deployment('registry.invalid/web:1', { progressDeadlineSeconds: 5 });
    const before = controllerStatus(w, { firstSeen: 0, now: 4_000 });
    expect(before).toMatchObject({ unavailableReplicas: 2 });
    expect(before?.availableReplicas).toBeUndefined();
    expect(conditionOf(before, 'Progressing')).toMatchObject({ status: 'True', reason: 'ReplicaSetUpdated' });
    const after = controllerStatus(w, { firstSeen: 0, now: 5_000 });
    expect(conditionOf(after, 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
    });
    expect(conditionOf(after, 'Progressing')?.message).toMatch(
      /^ReplicaSet "web-[a-z0-9]+" has timed out progressing\.$/,
    );
  });

  it('a Job completes, or fails past its backoff limit when its containers exit non-zero', () => {
    const job = (code?: string): Workload => ({
      kind: 'Job',
      metadata: { name: 'migrate', namespace: 'a' },
      spec: {
        backoffLimit: 1,
        template: {
          metadata: code ? { annotations: { 'capstan.test/exit-code': code } } : {},
          spec: { containers: [{ name: 'm', image: 'busybox' }] },
        },
      },
    });
    expect(conditionOf(controllerStatus(job(), { firstSeen: 0, now: 1 }), 'Complete')?.status).toBe('True');
    const failed = controllerStatus(job('3'), { firstSeen: 0, now: 1 });
    expect(failed).toMatchObject({ failed: 2 });
    expect(conditionOf(failed, 'Failed')?.reason).toBe('BackoffLimitExceeded');
  });

  it('a Pod runs, or waits in ImagePullBackOff; a run-to-completion Pod ends with its exit code', () => {
    const pod = (image: string, restartPolicy?: string): Workload => ({
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'a', annotations: { 'capstan.test/exit-code': '1' } },
      spec: { ...(restartPolicy ? { restartPolicy } : {}), containers: [{ name: 'c', image }] },
    });
    expect(controllerStatus(pod('nginx'), { firstSeen: 0, now: 1 })).toMatchObject({ phase: 'Running' });
    expect(controllerStatus(pod('x.invalid/nginx'), { firstSeen: 0, now: 1 })).toMatchObject({
      phase: 'Pending',
      containerStatuses: [{ state: { waiting: { reason: 'ImagePullBackOff' } } }],
    });
    expect(controllerStatus(pod('nginx', 'Never'), { firstSeen: 0, now: 1 })).toMatchObject({
      phase: 'Failed',
    });
  });

  it('leaves objects a test drives by hand, and kinds it does not play', () => {
    const manual = deployment('nginx');
    manual.metadata!.annotations = { 'capstan.test/controller': 'manual' };
    expect(controllerStatus(manual, { firstSeen: 0, now: 1 })).toBeUndefined();
    expect(
      controllerStatus({ kind: 'ConfigMap', metadata: { name: 'c' } }, { firstSeen: 0, now: 1 }),
    ).toBeUndefined();
  });

  it('only the .invalid top-level domain marks an image as unpullable', () => {
    expect(unpullable('registry.invalid/app:1')).toBe(true);
    expect(unpullable('registry.invalid:5000/app:1')).toBe(true);
    expect(unpullable('invalid/app:1')).toBe(false);
    expect(unpullable('nginx:invalid')).toBe(false);
  });

  it('does not write again what the API server already says, timestamps and omitted zeros aside', () => {
    const next = controllerStatus(deployment('registry.invalid/x'), { firstSeen: 0, now: 1_000 })!;
    const asStored = JSON.parse(JSON.stringify({ ...next, readyReplicas: 0 })) as Record<string, unknown>;
    (asStored.conditions as { lastUpdateTime: string }[])[0]!.lastUpdateTime = '2030-01-01T00:00:00Z';
    expect(statusChanged(asStored, next)).toBe(false);
    expect(statusChanged({ ...asStored, observedGeneration: 2 }, next)).toBe(true);
  });
});
