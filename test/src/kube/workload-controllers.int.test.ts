// The workload controllers' stand-in against a real kube-apiserver: it writes through the status
// subresource what the deployment and job controllers would, and leaves what a test drives by hand.
import { AppsV1Api, BatchV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startCluster,
  startWorkloadControllers,
  type KubeCluster,
  type WorkloadControllers,
} from './index.js';

const NS = 'workloads';

function deployment(name: string, image: string, extra: Partial<V1Deployment['spec']> = {}): V1Deployment {
  return {
    metadata: { name },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
      ...extra,
    },
  };
}

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const until = Date.now() + 30_000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('workload controllers stand-in', () => {
  let cluster: KubeCluster;
  let controllers: WorkloadControllers;
  let apps: AppsV1Api;

  beforeAll(async () => {
    cluster = await startCluster({ name: 'workloads', log: () => {} });
    const kc = cluster.adminKubeconfig;
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
    controllers = await startWorkloadControllers(kc);
    apps = kc.makeApiClient(AppsV1Api);
  }, 120_000);

  afterAll(async () => {
    await controllers?.stop();
    await cluster?.stop();
  });

  it('makes a Deployment available at its generation, and again after a change', async () => {
    await apps.createNamespacedDeployment({ namespace: NS, body: deployment('web', 'nginx:1.27') });
    const first = await eventually(
      () => apps.readNamespacedDeployment({ name: 'web', namespace: NS }),
      (d) => d.status?.availableReplicas === 2,
      'web available',
    );
    expect(first.status?.observedGeneration).toBe(first.metadata?.generation);
    await apps.patchNamespacedDeployment({
      name: 'web',
      namespace: NS,
      body: [{ op: 'replace', path: '/spec/replicas', value: 3 }],
    });
    const second = await eventually(
      () => apps.readNamespacedDeployment({ name: 'web', namespace: NS }),
      (d) => d.status?.availableReplicas === 3,
      'web scaled',
    );
    expect(second.status?.observedGeneration).toBe(second.metadata?.generation);
  });

  it('reports a Deployment whose image never pulls past its progress deadline', async () => {
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('stuck', 'registry.invalid/app:1', { progressDeadlineSeconds: 2 }),
    });
    const d = await eventually(
      () => apps.readNamespacedDeployment({ name: 'stuck', namespace: NS }),
      (x) => x.status?.conditions?.some((c) => c.reason === 'ProgressDeadlineExceeded') === true,
      'stuck past its deadline',
    );
    expect(d.status?.availableReplicas ?? 0).toBe(0);
    expect(d.status?.unavailableReplicas).toBe(2);
  });

  it('completes or fails Jobs, and leaves a manual one alone', async () => {
    const batch = cluster.adminKubeconfig.makeApiClient(BatchV1Api);
    const job = (
      name: string,
      annotations: Record<string, string>,
      podAnnotations: Record<string, string>,
    ) => ({
      metadata: { name, annotations },
      spec: {
        backoffLimit: 0,
        template: {
          metadata: { annotations: podAnnotations },
          spec: { restartPolicy: 'Never', containers: [{ name: 'j', image: 'busybox' }] },
        },
      },
    });
    await batch.createNamespacedJob({ namespace: NS, body: job('ok', {}, {}) });
    await batch.createNamespacedJob({
      namespace: NS,
      body: job('bad', {}, { 'capstan.test/exit-code': '2' }),
    });
    await batch.createNamespacedJob({
      namespace: NS,
      body: job('hand', { 'capstan.test/controller': 'manual' }, {}),
    });
    const read = (name: string) => () => batch.readNamespacedJob({ name, namespace: NS });
    await eventually(read('ok'), (j) => j.status?.succeeded === 1, 'ok complete');
    const bad = await eventually(read('bad'), (j) => (j.status?.failed ?? 0) > 0, 'bad failed');
    expect(bad.status?.conditions?.find((c) => c.type === 'Failed')?.reason).toBe('BackoffLimitExceeded');
    const hand = await read('hand')();
    expect(hand.status?.succeeded ?? 0).toBe(0);
    expect(hand.status?.conditions ?? []).toEqual([]);
  });
});
