import { existsSync } from 'node:fs';
import { connect } from 'node:tls';
import {
  AppsV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  type V1Deployment,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTROL_PLANE_USERNAME,
  effectiveUser,
  seedTenant,
  serviceAccountUsername,
  startCluster,
  type AuditEvent,
  type KubeCluster,
} from './index.js';

const DEPLOYER = serviceAccountUsername('team-a', 'deployer');

function deployment(name: string): V1Deployment {
  return {
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] },
      },
    },
  };
}

/** The HTTP status a client-node call failed with (it throws ApiException with .code). */
async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    throw err;
  }
}

function onObject(resource: string, namespace: string, name: string) {
  return (e: AuditEvent) =>
    e.objectRef?.resource === resource && e.objectRef.namespace === namespace && e.objectRef.name === name;
}

describe('a real Kubernetes API server on loopback', () => {
  let cluster: KubeCluster;
  let asDeployer: KubeConfig;

  beforeAll(async () => {
    cluster = await startCluster({ name: 'cluster-a' });
    await seedTenant(cluster.adminKubeconfig, {
      namespace: 'team-a',
      serviceAccounts: ['deployer'],
      // May manage ConfigMaps and create Deployments; may not delete Deployments or touch Secrets.
      rules: [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
        },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'create'] },
      ],
    });
    await seedTenant(cluster.adminKubeconfig, { namespace: 'team-b', serviceAccounts: ['deployer'] });
    asDeployer = cluster.kubeconfigFor({ impersonate: DEPLOYER });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('names the control-plane identity Capstan registers the cluster with', () => {
    // The static-token user with real binaries; a ServiceAccount of its own with k3s.
    expect(cluster.controlPlaneUsername).toBe(
      cluster.backend === 'binaries'
        ? CONTROL_PLANE_USERNAME
        : serviceAccountUsername('capstan-system', 'capstan-control-plane'),
    );
  });

  it('lets the control-plane identity, impersonating a ServiceAccount, do what the SA may', async () => {
    const since = await cluster.audit.mark();
    const apps = asDeployer.makeApiClient(AppsV1Api);
    const created = await apps.createNamespacedDeployment({
      namespace: 'team-a',
      body: deployment('guestbook'),
    });
    expect(created.metadata?.namespace).toBe('team-a');
    const core = asDeployer.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: 'team-a',
      body: { metadata: { name: 'settings' }, data: { a: '1' } },
    });

    const [deploy] = await cluster.audit.waitFor(
      (e) => e.verb === 'create' && onObject('deployments', 'team-a', 'guestbook')(e),
      { since },
    );
    expect(deploy?.user.username).toBe(cluster.controlPlaneUsername);
    expect(deploy?.impersonatedUser?.username).toBe(DEPLOYER);
    expect(deploy?.responseStatus?.code).toBe(201);
    const [cm] = await cluster.audit.waitFor(
      (e) => e.verb === 'create' && onObject('configmaps', 'team-a', 'settings')(e),
      { since },
    );
    expect(cm?.impersonatedUser?.username).toBe(DEPLOYER);
    expect(cm?.responseStatus?.code).toBe(201);

    // The kubeconfig YAML (what kubectl or a service under test reads) impersonates the same way.
    const fromYaml = new KubeConfig();
    fromYaml.loadFromString(cluster.kubeconfigYamlFor({ impersonate: DEPLOYER }, { namespace: 'team-a' }));
    const read = await fromYaml
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'settings', namespace: 'team-a' });
    expect(read.data).toEqual({ a: '1' });
    const [get] = await cluster.audit.waitFor(
      (e) => e.verb === 'get' && onObject('configmaps', 'team-a', 'settings')(e),
      {
        since,
      },
    );
    expect(get?.impersonatedUser?.username).toBe(DEPLOYER);
    expect(get?.responseStatus?.code).toBe(200);
  });

  it('refuses the impersonated ServiceAccount a verb its Role does not grant, with 403', async () => {
    const since = await cluster.audit.mark();
    const apps = asDeployer.makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({ namespace: 'team-a', body: deployment('to-keep') });
    expect(await statusOf(apps.deleteNamespacedDeployment({ name: 'to-keep', namespace: 'team-a' }))).toBe(
      403,
    );
    const core = asDeployer.makeApiClient(CoreV1Api);
    expect(
      await statusOf(
        core.createNamespacedSecret({ namespace: 'team-a', body: { metadata: { name: 'nope' } } }),
      ),
    ).toBe(403);
    // Nor anything in another tenant's namespace.
    expect(
      await statusOf(
        core.createNamespacedConfigMap({ namespace: 'team-b', body: { metadata: { name: 'nope' } } }),
      ),
    ).toBe(403);

    const [del] = await cluster.audit.waitFor(
      (e) => e.verb === 'delete' && onObject('deployments', 'team-a', 'to-keep')(e),
      { since },
    );
    expect(del?.user.username).toBe(cluster.controlPlaneUsername);
    expect(del?.impersonatedUser?.username).toBe(DEPLOYER);
    expect(del?.responseStatus?.code).toBe(403);
    // A create refused before the server reads the body has no object name in its audit event.
    const denied = await cluster.audit.waitFor(
      (e) =>
        e.responseStatus?.code === 403 &&
        e.verb === 'create' &&
        ((e.objectRef?.resource === 'secrets' && e.objectRef.namespace === 'team-a') ||
          (e.objectRef?.resource === 'configmaps' && e.objectRef.namespace === 'team-b')),
      { since, count: 2 },
    );
    expect(denied.map(effectiveUser)).toEqual([DEPLOYER, DEPLOYER]);
    expect(denied.map((e) => e.user.username)).toEqual([
      cluster.controlPlaneUsername,
      cluster.controlPlaneUsername,
    ]);
  });

  it('gives the control-plane identity itself no right to create a Deployment', async () => {
    const since = await cluster.audit.mark();
    const apps = cluster.controlPlaneKubeconfig.makeApiClient(AppsV1Api);
    expect(
      await statusOf(apps.createNamespacedDeployment({ namespace: 'team-a', body: deployment('direct') })),
    ).toBe(403);
    const core = cluster.controlPlaneKubeconfig.makeApiClient(CoreV1Api);
    expect(await statusOf(core.listNamespacedConfigMap({ namespace: 'team-a' }))).toBe(403);

    const [event] = await cluster.audit.waitFor(
      (e) =>
        e.verb === 'create' &&
        e.objectRef?.resource === 'deployments' &&
        e.objectRef.namespace === 'team-a' &&
        e.user.username === cluster.controlPlaneUsername,
      { since },
    );
    expect(event?.user.username).toBe(cluster.controlPlaneUsername);
    expect(event?.impersonatedUser).toBeUndefined();
    expect(event?.responseStatus?.code).toBe(403);

    // What it may do: ask what it may do (every authenticated user may: system:basic-user, not a
    // rule of its own), and impersonate ServiceAccounts — not other users.
    const authz = cluster.controlPlaneKubeconfig.makeApiClient(AuthorizationV1Api);
    const review = await authz.createSelfSubjectAccessReview({
      body: {
        spec: {
          resourceAttributes: { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'team-a' },
        },
      },
    });
    expect(review.status?.allowed).toBe(false);
    const asAdmin = cluster.kubeconfigFor({ impersonate: 'capstan-admin' }).makeApiClient(CoreV1Api);
    expect(await statusOf(asAdmin.listNamespace())).toBe(403);
  });

  it('records every request with the identity it ran as', async () => {
    const events = await cluster.audit.flush();
    const byControlPlane = events.filter((e) => e.user.username === cluster.controlPlaneUsername);
    expect(byControlPlane.length).toBeGreaterThan(0);
    for (const e of byControlPlane) {
      // Either it impersonated the ServiceAccount, or it acted as itself and was refused
      // (the SelfSubjectAccessReview aside, which every authenticated user may create).
      if (e.impersonatedUser) continue;
      if (e.objectRef?.resource === 'selfsubjectaccessreviews') expect(e.responseStatus?.code).toBe(201);
      else expect(e.responseStatus?.code).toBe(403);
    }
    const impersonated = byControlPlane.filter((e) => e.impersonatedUser?.username === DEPLOYER);
    expect(impersonated.length).toBeGreaterThanOrEqual(6);
  });

  it('runs a second cluster side by side, isolated from the first', async () => {
    const other = await startCluster({ name: 'cluster-b' });
    try {
      expect(other.server).not.toBe(cluster.server);
      expect(other.caData).not.toBe(cluster.caData);
      const t = other.timings;
      console.log(
        `[capstan kube] second cluster, warm start: ${(t.totalMs / 1000).toFixed(2)}s ` +
          `(kube-apiserver ${(t.apiserverMs / 1000).toFixed(2)}s)`,
      );
      await seedTenant(other.adminKubeconfig, {
        namespace: 'team-a',
        serviceAccounts: ['deployer'],
        rules: [],
      });

      // The Deployment made in the first cluster is not in the second.
      const appsB = other.adminKubeconfig.makeApiClient(AppsV1Api);
      expect(await statusOf(appsB.readNamespacedDeployment({ name: 'guestbook', namespace: 'team-a' }))).toBe(
        404,
      );
      // The same ServiceAccount name has no rights there.
      const asDeployerB = other.kubeconfigFor({ impersonate: DEPLOYER }).makeApiClient(AppsV1Api);
      expect(
        await statusOf(
          asDeployerB.createNamespacedDeployment({ namespace: 'team-a', body: deployment('x') }),
        ),
      ).toBe(403);
      // Each cluster's credentials work on it alone.
      const crossed = other.kubeconfigFor({ token: cluster.adminToken }).makeApiClient(CoreV1Api);
      expect(await statusOf(crossed.listNamespace())).toBe(401);
      // And each has its own CA: the first cluster's CA does not vouch for the second server.
      const { hostname, port } = new URL(other.server);
      const tlsError = await new Promise<Error | undefined>((resolve) => {
        const socket = connect({
          host: hostname,
          port: Number(port),
          ca: cluster.caPem,
          servername: 'localhost',
        });
        socket.once('secureConnect', () => {
          socket.end();
          resolve(undefined);
        });
        socket.once('error', resolve);
      });
      expect(tlsError?.message).toMatch(/certificate/i);

      // Both audit logs are separate files.
      expect(other.auditLogPath).not.toBe(cluster.auditLogPath);
      const otherEvents = await other.audit.flush();
      expect(otherEvents.some((e) => e.objectRef?.name === 'guestbook' && e.verb === 'get')).toBe(true);
    } finally {
      await other.stop();
    }
    expect(existsSync(other.dir)).toBe(false);
    // The first cluster carries on.
    const core = cluster.adminKubeconfig.makeApiClient(CoreV1Api);
    expect((await core.readNamespace({ name: 'team-a' })).metadata?.name).toBe('team-a');
  }, 120_000);
});
