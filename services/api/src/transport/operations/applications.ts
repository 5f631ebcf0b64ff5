import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { bool, int, implement, op, optionalBool, resource, str, strList } from '../operation.js';
import { parseDeleteOptions } from '../../applications/application-deletion.js';
import { applicationView, operationView } from '../views.js';
import { invalid } from '../../support/validation.js';
import { findApplication } from '../../applications/application.repository.js';
import { findSyncOperation } from '../../applications/sync-operation.repository.js';
import type { ApiServices } from '../../services.js';
import type { RequestContext } from '../../support/request.js';
import { keepUnrepresentable } from '../unrepresentable.js';
import { versionOf } from './projects.js';
import { encodedApplicationList } from '../application-list-encoding.js';
import { revisionHistory } from '../../applications/revision-history.js';
import { historyLimitOf, rollback } from '../../applications/rollback.js';
import { MAX_SYNC_RESOURCES } from '@capstan/events';
import { ValidationError } from '@capstan/service';
import { sourcePositionViolations } from '../../applications/source-revisions.js';

/** Over gRPC, the stored application's fields that the message cannot carry are kept (see unrepresentable.ts). */
async function complete(
  s: ApiServices,
  ctx: RequestContext,
  manifest: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const meta = manifest.metadata as { name?: unknown; namespace?: unknown } | undefined;
  if (ctx.via !== 'grpc' || typeof meta?.name !== 'string') return manifest;
  const stored = await findApplication(
    s.db,
    typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : DEFAULT_CONTROL_NAMESPACE,
    meta.name,
  );
  return stored ? keepUnrepresentable(apiv1.Application, stored.application, manifest) : manifest;
}

/** What ApplicationService.Get answers (RBAC applications/get, audited); the UI's stream sends the same. */
export async function applicationGetView(
  s: ApiServices,
  ctx: RequestContext,
  i: { appNamespace: string; name: string; project: string },
) {
  const app = await s.applications.get(ctx, i.appNamespace, i.name, i.project || undefined);
  const operation = app.operationId ? await findSyncOperation(s.db, app.operationId) : undefined;
  const { namespace, name } = app.application.metadata;
  const history = await revisionHistory(
    s.db,
    namespace ?? DEFAULT_CONTROL_NAMESPACE,
    name,
    historyLimitOf(app.application),
  );
  return applicationView(app, operation, history);
}

const appQuery = z.strictObject({ name: z.string().min(1, 'required'), appNamespace: str, project: str });

/** Argo CD's SyncOperationResource list (a selective sync), bounded as the sync request is. */
const syncResources = z
  .array(
    z.strictObject({
      group: str,
      kind: z.string().min(1, 'required'),
      name: z.string().min(1, 'required'),
      namespace: str,
    }),
  )
  .max(MAX_SYNC_RESOURCES, `at most ${MAX_SYNC_RESOURCES} resources`)
  .default([]);

export const applicationOperations = implement<apiv1.ApplicationServiceServer>(
  apiv1.ApplicationServiceService,
  {
    create: op({
      http: { method: 'POST', path: '/api/v1/applications' },
      auth: 'user',
      summary: 'create an Application (upsert updates an existing one)',
      input: z.strictObject({ application: resource, upsert: bool }),
      request: apiv1.ApplicationCreateRequest,
      response: apiv1.Application,
      run: async (s, ctx, i) =>
        applicationView(await s.applications.create(ctx, await complete(s, ctx, i.application), i.upsert)),
    }),
    get: op({
      http: { method: 'GET', path: '/api/v1/applications/:name' },
      auth: 'user',
      summary:
        "get an Application with Argo CD's status: the reconciler's sync, health and resources, operationState and history",
      input: appQuery,
      request: apiv1.ApplicationQuery,
      response: apiv1.Application,
      run: applicationGetView,
    }),
    list: op({
      http: { method: 'GET', path: '/api/v1/applications' },
      auth: 'user',
      summary: 'list the Applications the caller may get (paged)',
      input: z.strictObject({ projects: strList, selector: str, limit: int, pageToken: str }),
      request: apiv1.ApplicationListQuery,
      response: apiv1.ApplicationList,
      run: async (s, ctx, i) => {
        if (i.limit < 0) throw invalid('limit', 'must not be negative');
        const page = await s.applications.list(ctx, i, s.policy);
        return encodedApplicationList(page.items, page.nextPageToken);
      },
    }),
    update: op({
      http: { method: 'PUT', path: '/api/v1/applications/:name' },
      auth: 'user',
      summary: 'update an Application (metadata.resourceVersion, when set, must be current)',
      input: z.strictObject({ name: str, application: resource }),
      request: apiv1.ApplicationUpdateRequest,
      response: apiv1.Application,
      run: async (s, ctx, i) => {
        const name = (i.application.metadata as { name?: unknown } | undefined)?.name;
        if (i.name && name !== i.name)
          throw invalid('application.metadata.name', `must match the path (${i.name})`);
        return applicationView(
          await s.applications.update(ctx, await complete(s, ctx, i.application), versionOf(i.application)),
        );
      },
    }),
    delete: op({
      http: { method: 'DELETE', path: '/api/v1/applications/:name' },
      auth: 'user',
      summary:
        'delete an Application; cascade (default true) deletes its resources first, as its ServiceAccount, while the Application shows deletionTimestamp',
      input: z.strictObject({
        name: z.string().min(1, 'required'),
        appNamespace: str,
        cascade: optionalBool,
        propagationPolicy: str,
      }),
      request: apiv1.ApplicationDeleteRequest,
      response: apiv1.Empty,
      run: async (s, ctx, i) => {
        const options = parseDeleteOptions(i.cascade, i.propagationPolicy);
        await s.applications.delete(ctx, i.appNamespace, i.name, {
          ...options,
          // Argo CD's CLI and UI send cascade=true unless told otherwise; so does an API call without it.
          cascade: options.cascade ?? true,
        });
        return {};
      },
    }),
    sync: op({
      http: { method: 'POST', path: '/api/v1/applications/:name/sync' },
      auth: 'user',
      summary:
        "ask the sync service to sync (or dry-run) an Application, or only some of its resources (Argo CD's selective sync), a multi-source one's sources at revisions by sourcePositions (from 1); returns the operation id",
      input: z.strictObject({
        name: z.string().min(1, 'required'),
        appNamespace: str,
        revision: str,
        dryRun: bool,
        prune: bool,
        resources: syncResources,
        revisions: z.array(z.string().max(255, 'at most 255 characters')).max(100, 'at most 100').default([]),
        sourcePositions: z.array(int).max(100, 'at most 100').default([]),
      }),
      request: apiv1.ApplicationSyncRequest,
      response: apiv1.ApplicationSyncResponse,
      run: async (s, ctx, i) => {
        // Argo CD's CLI checks these before it sends the request; the api checks them for every client.
        const violations = sourcePositionViolations(i.revisions, i.sourcePositions);
        if (violations.length > 0) throw new ValidationError(violations);
        const r = await s.applications.sync(ctx, i.appNamespace, i.name, {
          revision: i.revision,
          dryRun: i.dryRun,
          prune: i.prune,
          resources: i.resources,
          revisions: i.revisions,
          sourcePositions: i.sourcePositions,
        });
        return { operationId: r.operationId, application: applicationView(r.application) };
      },
    }),
    rollback: op({
      http: { method: 'POST', path: '/api/v1/applications/:name/rollback' },
      auth: 'user',
      summary:
        "Argo CD's rollback: sync to the revision of a status.history entry (id), as a sync (RBAC applications, sync); refused while automated sync is enabled",
      input: z.strictObject({
        name: z.string().min(1, 'required'),
        id: int,
        dryRun: bool,
        prune: bool,
        appNamespace: str,
        project: str,
      }),
      request: apiv1.ApplicationRollbackRequest,
      response: apiv1.ApplicationSyncResponse,
      run: async (s, ctx, i) => {
        const r = await rollback({ db: s.db, applications: s.applications }, ctx, i);
        return { operationId: r.operationId, application: applicationView(r.application) };
      },
    }),
    history: op({
      http: { method: 'GET', path: '/api/v1/applications/:name/history' },
      auth: 'user',
      summary:
        'every sync operation of an Application (any trigger, failed and dry runs included), newest first; status.history has the successful deployments',
      input: appQuery,
      request: apiv1.ApplicationQuery,
      response: apiv1.SyncHistory,
      run: async (s, ctx, i) => ({
        items: (await s.applications.history(ctx, i.appNamespace, i.name)).map(operationView),
      }),
    }),
    getOperation: op({
      http: { method: 'GET', path: '/api/v1/applications/:name/operations/:id' },
      auth: 'user',
      summary: 'one sync operation with its per-resource results',
      input: z.strictObject({
        name: z.string().min(1, 'required'),
        appNamespace: str,
        id: z.string().min(1, 'required'),
      }),
      request: apiv1.OperationQuery,
      response: apiv1.SyncOperation,
      run: async (s, ctx, i) =>
        operationView(await s.applications.operation(ctx, i.appNamespace, i.name, i.id)),
    }),
    managedResources: op({
      http: { method: 'GET', path: '/api/v1/applications/:applicationName/managed-resources' },
      auth: 'user',
      summary:
        "git's objects against the live ones (Argo CD's ManagedResources, `capstan app diff`), read as the Application's ServiceAccount; Secrets masked",
      input: z.strictObject({
        applicationName: z.string().min(1, 'required'),
        appNamespace: str,
        project: str,
        namespace: str,
        name: str,
        version: str,
        group: str,
        kind: str,
      }),
      request: apiv1.ResourcesQuery,
      response: apiv1.ManagedResourcesResponse,
      run: (s, ctx, i) => s.managedResources.list(ctx, i),
    }),
    resourceTree: op({
      http: { method: 'GET', path: '/api/v1/applications/:applicationName/resource-tree' },
      auth: 'user',
      summary:
        "Argo CD's ResourceTree: the Application's live objects and the objects they own (ownerReferences), with health, read as its ServiceAccount; bounded (truncated says when cut)",
      input: z.strictObject({
        applicationName: z.string().min(1, 'required'),
        appNamespace: str,
        project: str,
        namespace: str,
        name: str,
        version: str,
        group: str,
        kind: str,
      }),
      request: apiv1.ResourcesQuery,
      response: apiv1.ApplicationTree,
      run: (s, ctx, i) => s.managedResources.tree(ctx, i),
    }),
    listResourceEvents: op({
      http: { method: 'GET', path: '/api/v1/applications/:name/events' },
      auth: 'user',
      summary:
        "Argo CD's ListResourceEvents: the Kubernetes events of one object of the Application's tree, listed as its ServiceAccount (error says when it may not)",
      input: z.strictObject({
        name: z.string().min(1, 'required'),
        resourceNamespace: str,
        resourceName: str,
        resourceUID: str,
        appNamespace: str,
        project: str,
      }),
      request: apiv1.ApplicationResourceEventsQuery,
      response: apiv1.EventList,
      run: (s, ctx, i) => s.managedResources.events(ctx, { ...i, resourceUid: i.resourceUID }),
    }),
    explainSync: op({
      http: { method: 'GET', path: '/api/v1/applications/:name/sync-explanation' },
      auth: 'user',
      summary:
        "who a sync of the Application would write as now, and why: the sync service's explainSync (`capstan sync explain`), rules of projects the caller may not get withheld",
      input: appQuery,
      request: apiv1.ApplicationQuery,
      response: apiv1.SyncExplanation,
      run: (s, ctx, i) => s.managedResources.explain(ctx, i),
    }),
  },
);
