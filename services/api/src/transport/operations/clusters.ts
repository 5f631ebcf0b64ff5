import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { bool, int, implement, op, str, strList } from '../operation.js';
import { clusterView } from '../views.js';

const registration = {
  server: str,
  name: str,
  config: z.record(z.string(), z.unknown()).optional(),
  namespaces: strList,
  project: str,
  labels: z.record(z.string(), z.string()).default({}),
};

/** A cluster is addressed by server URL or by name; a path segment without "://" is a name. */
const clusterQuery = z.strictObject({ server: str, name: str });
const by = (i: { server: string; name: string }) =>
  i.server && !i.server.includes('://')
    ? { name: i.server }
    : i.server
      ? { server: i.server }
      : { name: i.name };

export const clusterOperations = implement<apiv1.ClusterServiceServer>(apiv1.ClusterServiceService, {
  create: op({
    http: { method: 'POST', path: '/api/v1/clusters' },
    auth: 'user',
    summary:
      'register a target cluster with its control-plane credentials (stored encrypted, never returned)',
    input: z.strictObject({ ...registration, upsert: bool, resourceVersion: int }),
    request: apiv1.ClusterCreateRequest,
    response: apiv1.Cluster,
    run: async (s, ctx, i) => {
      const { upsert, resourceVersion: _rv, ...reg } = i;
      return clusterView(await s.clusters.create(ctx, reg, upsert));
    },
  }),
  update: op({
    http: { method: 'PUT', path: '/api/v1/clusters/:server' },
    auth: 'user',
    summary: 'update a cluster; without a credential the stored one is kept',
    input: z.strictObject({ ...registration, upsert: bool, resourceVersion: int }),
    request: apiv1.ClusterCreateRequest,
    response: apiv1.Cluster,
    run: async (s, ctx, i) => {
      const { upsert: _u, resourceVersion, ...reg } = i;
      return clusterView(await s.clusters.update(ctx, reg, resourceVersion));
    },
  }),
  get: op({
    http: { method: 'GET', path: '/api/v1/clusters/:server' },
    auth: 'user',
    summary: 'get a cluster by server URL (URL-encoded) or name',
    input: clusterQuery,
    request: apiv1.ClusterQuery,
    response: apiv1.Cluster,
    run: async (s, ctx, i) => clusterView(await s.clusters.get(ctx, by(i))),
  }),
  list: op({
    http: { method: 'GET', path: '/api/v1/clusters' },
    auth: 'user',
    summary: 'list the clusters the caller may get',
    input: z.strictObject({}),
    request: apiv1.ClusterListQuery,
    response: apiv1.ClusterList,
    run: async (s, ctx) => ({ items: (await s.clusters.list(ctx)).map(clusterView) }),
  }),
  delete: op({
    http: { method: 'DELETE', path: '/api/v1/clusters/:server' },
    auth: 'user',
    summary: 'remove a cluster and its stored credentials',
    input: clusterQuery,
    request: apiv1.ClusterQuery,
    response: apiv1.Empty,
    run: async (s, ctx, i) => {
      await s.clusters.delete(ctx, by(i));
      return {};
    },
  }),
});

export const clusterCredentialOperations = implement<apiv1.ClusterCredentialsServer>(
  apiv1.ClusterCredentialsService,
  {
    get: op({
      http: undefined,
      auth: 'user',
      summary: 'internal: a cluster credential, for the services in auth.credential-readers',
      input: clusterQuery,
      request: apiv1.ClusterQuery,
      response: apiv1.ClusterCredentialsResponse,
      run: async (s, ctx, i) => {
        const { cluster, config } = await s.clusters.credentials(ctx, by(i));
        return { server: cluster.cluster.server, name: cluster.cluster.name, config };
      },
    }),
  },
);
