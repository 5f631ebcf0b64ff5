import type { Loose } from './test-support/loose.js';
import { describe, expect, it } from 'vitest';
import { compareResource } from './compare.js';
import { compileIgnoreDifferences } from './ignore.js';
import type { KubeObjectLike } from './types.js';

const FM = { fieldManager: 'capstan' };

function deployment(image = 'nginx:1.25', extra: Record<string, unknown> = {}): KubeObjectLike {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team-a' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'web',
              image,
              ports: [{ containerPort: 80 }],
              resources: { limits: { cpu: '0.5', memory: '1Gi' } },
            },
          ],
        },
      },
      ...extra,
    },
  };
}

/** What the API server returns for deployment(): defaults, server metadata, status, managed fields. */
function served(desired: KubeObjectLike, managedFields: unknown[] = []): KubeObjectLike {
  const live = structuredClone(desired) as Loose;
  Object.assign(live.metadata, {
    uid: 'u-1',
    resourceVersion: '42',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
    annotations: {
      'deployment.kubernetes.io/revision': '1',
      'argocd.argoproj.io/tracking-id': 'guestbook:apps/Deployment:team-a/web',
    },
    managedFields,
  });
  live.spec.progressDeadlineSeconds = 600;
  live.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
  const c = live.spec.template.spec.containers[0];
  c.terminationMessagePath = '/dev/termination-log';
  c.imagePullPolicy = 'IfNotPresent';
  c.ports[0].protocol = 'TCP';
  c.resources.limits.cpu = '500m';
  c.resources.limits.memory = '1073741824';
  live.spec.template.spec.restartPolicy = 'Always';
  live.status = { replicas: 2, readyReplicas: 2 };
  return live;
}

const capstanOwns = (fields: object) => ({
  manager: 'capstan',
  operation: 'Apply',
  fieldsType: 'FieldsV1',
  fieldsV1: fields,
});

describe('compareResource', () => {
  it('is Synced when live differs only by defaults, server metadata, status and canonical quantities', () => {
    const result = compareResource(deployment(), served(deployment()), FM);
    expect(result.differences).toEqual([]);
    expect(result.status).toBe('Synced');
    expect(result.normalizedLive?.metadata).not.toHaveProperty('managedFields');
    expect(result.normalizedLive).not.toHaveProperty('status');
  });

  it('reports a changed image at its path, and the predicted live carries git’s image', () => {
    const result = compareResource(deployment('nginx:1.26'), served(deployment()), FM);
    expect(result.status).toBe('OutOfSync');
    expect(result.differences).toEqual(['/spec/template/spec/containers/0/image']);
    expect((result.predictedLive as Loose).spec.template.spec.containers[0].image).toBe('nginx:1.26');
    expect((result.predictedLive as Loose).spec.progressDeadlineSeconds).toBe(600);
  });

  it('a different quantity is drift', () => {
    const live = served(deployment()) as Loose;
    live.spec.template.spec.containers[0].resources.limits.cpu = '600m';
    expect(compareResource(deployment(), live, FM).differences).toEqual([
      '/spec/template/spec/containers/0/resources/limits/cpu',
    ]);
  });

  it('a field git stopped declaring is drift only when capstan owns it', () => {
    const live = served(deployment(), [
      capstanOwns({ 'f:metadata': { 'f:labels': { 'f:tier': {} } } }),
      {
        manager: 'kubectl-edit',
        operation: 'Update',
        fieldsV1: { 'f:metadata': { 'f:labels': { 'f:owner': {} } } },
      },
    ]) as Loose;
    live.metadata.labels = { tier: 'front', owner: 'ops' };
    const result = compareResource(deployment(), live, FM);
    expect(result.differences).toEqual(['/metadata/labels/tier']);
    expect((result.predictedLive as Loose).metadata.labels).toEqual({ owner: 'ops' });
  });

  it('a container git removed is drift when capstan owned it; one added by another manager is not', () => {
    const live = served(deployment()) as Loose;
    live.spec.template.spec.containers.push(
      { name: 'old', image: 'busybox' },
      { name: 'mesh', image: 'envoy' },
    );
    live.metadata.managedFields = [
      capstanOwns({
        'f:spec': {
          'f:template': {
            'f:spec': { 'f:containers': { 'k:{"name":"old"}': { '.': {}, 'f:name': {}, 'f:image': {} } } },
          },
        },
      }),
    ];
    const result = compareResource(deployment(), live, FM);
    expect(result.differences).toEqual(['/spec/template/spec/containers/1']);
    expect((result.predictedLive as Loose).spec.template.spec.containers.map((c: Loose) => c.name)).toEqual([
      'web',
      'mesh',
    ]);
  });

  it('matches list items by name, not position', () => {
    const desired = deployment() as Loose;
    desired.spec.template.spec.containers[0].env = [
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ];
    const live = served(desired) as Loose;
    live.spec.template.spec.containers[0].env.reverse();
    expect(compareResource(desired, live, FM).status).toBe('Synced');
    live.spec.template.spec.containers[0].env[0].value = '3';
    expect(compareResource(desired, live, FM).differences).toEqual([
      '/spec/template/spec/containers/0/env/1/value',
    ]);
  });

  it('an unnamed list is compared by index and extra items are drift', () => {
    const desired = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      spec: { args: ['a', 'b'] },
    };
    const live = { ...desired, spec: { args: ['a', 'b', 'c'] } };
    expect(compareResource(desired, live, FM).differences).toEqual(['/spec/args/2']);
  });

  it('empty maps and lists equal absent ones, and int-or-string ports compare as the same value', () => {
    const desired = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', annotations: {}, labels: {} },
      spec: { ports: [{ name: 'http', port: 80, targetPort: '8080' }], selector: {}, externalIPs: [] },
    };
    const live = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }], clusterIP: '10.0.0.1' },
    };
    expect(compareResource(desired, live, FM).differences).toEqual([]);
  });

  it('missing live, or live not in git, is OutOfSync; IgnoreExtraneous is reported for the latter', () => {
    expect(compareResource(deployment(), undefined, FM)).toMatchObject({
      status: 'OutOfSync',
      ignoreExtraneous: false,
    });
    const extra = served(deployment()) as Loose;
    extra.metadata.annotations['argocd.argoproj.io/compare-options'] =
      'IgnoreExtraneous, ServerSideDiff=true';
    expect(compareResource(undefined, extra, FM)).toMatchObject({
      status: 'OutOfSync',
      ignoreExtraneous: true,
    });
    expect(compareResource(undefined, served(deployment()), FM).ignoreExtraneous).toBe(false);
    expect(compareResource(undefined, undefined, FM).status).toBe('Synced');
  });

  it('keeps a declared status in the comparison', () => {
    const desired = {
      apiVersion: 'example.com/v1',
      kind: 'Thing',
      metadata: { name: 't' },
      status: { phase: 'A' },
    };
    const live = { ...desired, status: { phase: 'B' } };
    expect(compareResource(desired, live, FM).differences).toEqual(['/status/phase']);
  });
});

describe('ignoreDifferences in compareResource', () => {
  it('jsonPointers hide a change; group and kind must match', async () => {
    const live = served(deployment()) as Loose;
    live.spec.replicas = 5;
    const ignore = await compileIgnoreDifferences([
      { group: 'apps', kind: 'Deployment', jsonPointers: ['/spec/replicas'] },
    ]);
    expect(compareResource(deployment(), live, { ...FM, ignore }).status).toBe('Synced');
    const other = await compileIgnoreDifferences([
      { group: '', kind: 'Deployment', jsonPointers: ['/spec/replicas'] },
    ]);
    expect(compareResource(deployment(), live, { ...FM, ignore: other }).differences).toEqual([
      '/spec/replicas',
    ]);
    const wildcard = await compileIgnoreDifferences([
      { group: '*', kind: '*', name: 'web', jsonPointers: ['/spec/replicas'] },
    ]);
    expect(compareResource(deployment(), live, { ...FM, ignore: wildcard }).status).toBe('Synced');
    const otherName = await compileIgnoreDifferences([
      { group: '*', kind: '*', name: 'api', jsonPointers: ['/spec/replicas'] },
    ]);
    expect(compareResource(deployment(), live, { ...FM, ignore: otherName }).status).toBe('OutOfSync');
  });

  it('managedFieldsManagers hide what the HPA (kube-controller-manager) owns', async () => {
    const live = served(deployment(), [
      capstanOwns({ 'f:spec': { 'f:replicas': {} } }),
      {
        manager: 'kube-controller-manager',
        operation: 'Update',
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      },
    ]) as Loose;
    live.spec.replicas = 7;
    expect(compareResource(deployment(), live, FM).differences).toEqual(['/spec/replicas']);
    const ignore = await compileIgnoreDifferences([
      { group: 'apps', kind: 'Deployment', managedFieldsManagers: ['kube-controller-manager'] },
    ]);
    expect(compareResource(deployment(), live, { ...FM, ignore }).status).toBe('Synced');
  });

  it('jqPathExpressions hide what they select', async () => {
    const live = served(deployment()) as Loose;
    live.spec.template.spec.containers[0].image = 'nginx:injected';
    const ignore = await compileIgnoreDifferences([
      {
        group: 'apps',
        kind: 'Deployment',
        jqPathExpressions: ['.spec.template.spec.containers[] | select(.name == "web") | .image'],
      },
    ]);
    expect(compareResource(deployment(), live, { ...FM, ignore }).status).toBe('Synced');
  });
});

describe('Secrets', () => {
  const secret = (data: Record<string, string>, stringData?: Record<string, string>): KubeObjectLike => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'team-a' },
    type: 'Opaque',
    data,
    ...(stringData ? { stringData } : {}),
  });

  it('stringData in git equals the same data live', () => {
    const result = compareResource(
      secret({}, { password: 'hunter2' }),
      secret({ password: Buffer.from('hunter2').toString('base64') }),
      FM,
    );
    expect(result.status).toBe('Synced');
  });

  it('a changed value shows as a change of masked values and never leaks', () => {
    const result = compareResource(
      secret({ password: 'aHVudGVyMg==', user: 'YWRtaW4=' }),
      secret({ password: 'c2VjcmV0', user: 'YWRtaW4=' }),
      FM,
    );
    expect(result.differences).toEqual(['/data/password']);
    const shown = JSON.stringify([
      result.normalizedTarget,
      result.normalizedLive,
      result.predictedLive,
      result.differences,
    ]);
    for (const value of ['aHVudGVyMg==', 'c2VjcmV0', 'YWRtaW4=']) expect(shown).not.toContain(value);
    expect((result.predictedLive as Loose).data.password).not.toBe(
      (result.normalizedLive as Loose).data.password,
    );
    expect((result.predictedLive as Loose).data.user).toBe((result.normalizedLive as Loose).data.user);
    expect((result.normalizedLive as Loose).data.password).toMatch(/^\++$/);
  });
});
