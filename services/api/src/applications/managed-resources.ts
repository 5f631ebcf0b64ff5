// Argo CD's ManagedResources (behind `capstan app diff`), ResourceTree and ListResourceEvents, and
// Capstan's ExplainSync: the api authorizes the caller exactly as for reading the Application (RBAC
// applications/get, audited; a missing one looks forbidden), then asks the sync service, which reads
// the cluster as the Application's ServiceAccount (and decides the identity with its own settings).
// The api never reads a cluster itself, and the sync service answers only the api's service identity.
import type { apiv1 } from '@capstan/proto';
import { syncv1, unary, type UnaryMethod } from '@capstan/proto';
import { UnavailableError } from '@capstan/service';
import { peerError, type ServiceClient } from '@capstan/service-identity';
import type { RequestContext } from '../support/request.js';
import type { ApplicationsService } from './applications.service.js';
import { askPeerSettings } from '../settings/settings-view.js';
import type { Authorizer } from '../rbac/authorizer.js';
import { invalid } from '../support/validation.js';

type AppRef = { namespace: string; name: string };
export type ResourceEventsTarget = Pick<
  syncv1.ResourceEventsRequest,
  'resourceNamespace' | 'resourceName' | 'resourceUid'
>;

export interface SyncBackend {
  managedResources(app: AppRef): Promise<apiv1.ManagedResourcesResponse>;
  resourceTree(app: AppRef): Promise<apiv1.ApplicationTree>;
  resourceEvents(app: AppRef, target: ResourceEventsTarget): Promise<apiv1.EventList>;
  explainSync(app: AppRef): Promise<apiv1.SyncExplanation>;
  /** The peer's effective settings (`capstan admin settings`); absent when the peer is not configured. */
  settings?(showSource: boolean): Promise<apiv1.SettingEntry[]>;
}

/** Without sync.address, ManagedResources answers UNAVAILABLE, saying which setting is missing. */
export class UnconfiguredSyncBackend implements SyncBackend {
  private fail(): never {
    throw new UnavailableError('the sync service is not configured (sync.address)');
  }
  managedResources(): Promise<apiv1.ManagedResourcesResponse> {
    this.fail();
  }
  resourceTree(): Promise<apiv1.ApplicationTree> {
    this.fail();
  }
  resourceEvents(): Promise<apiv1.EventList> {
    this.fail();
  }
  explainSync(): Promise<apiv1.SyncExplanation> {
    this.fail();
  }
}

export class GrpcSyncBackend implements SyncBackend {
  private readonly client: syncv1.SyncServiceClient;

  constructor(
    address: string,
    private readonly identity: ServiceClient,
    private readonly timeoutMs = 60_000,
  ) {
    this.client = new syncv1.SyncServiceClient(address, identity.credentials);
  }

  private ask<Req, Res>(method: UnaryMethod<Req, Res>, request: Req): Promise<Res> {
    return unary(method, request, {
      metadata: this.identity.metadata(),
      timeoutMs: this.timeoutMs,
    }).catch((err: unknown) => {
      throw peerError(err, 'sync');
    });
  }

  managedResources(app: AppRef): Promise<apiv1.ManagedResourcesResponse> {
    return this.ask(
      this.client.managedResources.bind(this.client),
      syncv1.ManagedResourcesRequest.fromPartial(app),
    );
  }

  resourceTree(app: AppRef): Promise<apiv1.ApplicationTree> {
    return this.ask(
      this.client.resourceTree.bind(this.client),
      syncv1.ManagedResourcesRequest.fromPartial(app),
    );
  }

  resourceEvents(app: AppRef, target: ResourceEventsTarget): Promise<apiv1.EventList> {
    return this.ask(
      this.client.resourceEvents.bind(this.client),
      syncv1.ResourceEventsRequest.fromPartial({ ...app, ...target }),
    );
  }

  explainSync(app: AppRef): Promise<apiv1.SyncExplanation> {
    return this.ask(
      this.client.explainSync.bind(this.client),
      syncv1.ManagedResourcesRequest.fromPartial(app),
    );
  }

  settings(showSource: boolean): Promise<apiv1.SettingEntry[]> {
    return askPeerSettings(
      this.client.settings.bind(this.client),
      this.identity.metadata(),
      'sync',
      showSource,
    );
  }

  close(): void {
    this.client.close();
  }
}

export type ResourcesQuery = apiv1.ResourcesQuery;

export class ManagedResourcesService {
  constructor(
    private readonly deps: { applications: ApplicationsService; backend: SyncBackend; authz: Authorizer },
  ) {}

  /** The Application after RBAC applications/get (audited), as the sync service names it. */
  private async authorized(
    ctx: RequestContext,
    q: { appNamespace: string; name: string; project: string },
  ): Promise<AppRef> {
    const stored = await this.deps.applications.loadAuthorized(
      ctx,
      q.appNamespace,
      q.name,
      'get',
      q.project || undefined,
    );
    const metadata = stored.application.metadata as { namespace?: string; name: string };
    return { namespace: metadata.namespace ?? '', name: metadata.name };
  }

  /** Argo CD's ResourceTree: managed objects and the objects they own, read as the ServiceAccount. */
  async tree(ctx: RequestContext, q: ResourcesQuery): Promise<apiv1.ApplicationTree> {
    const app = await this.authorized(ctx, { ...q, name: q.applicationName });
    return this.deps.backend.resourceTree(app);
  }

  /**
   * Argo CD's ListResourceEvents for one object of the tree. Capstan's Applications are not
   * Kubernetes objects: their own events are the operations (History) and the audit trail.
   */
  async events(
    ctx: RequestContext,
    q: { name: string; appNamespace: string; project: string } & ResourceEventsTarget,
  ): Promise<apiv1.EventList> {
    if (!q.resourceName && !q.resourceUid)
      throw invalid(
        'resourceName',
        "required: an Application's own events are its sync operations (GET /api/v1/applications/{name}/history)",
      );
    const app = await this.authorized(ctx, q);
    return this.deps.backend.resourceEvents(app, q);
  }

  /**
   * Who a sync would write as now, and why (the sync service's explainSync). The rules of a
   * project in the chain that the caller may not get are withheld (their server, namespace and
   * ServiceAccount blanked), so a tenant learns no more of a parent than the decision itself.
   */
  async explain(
    ctx: RequestContext,
    q: { name: string; appNamespace: string; project: string },
  ): Promise<apiv1.SyncExplanation> {
    const app = await this.authorized(ctx, q);
    const e = await this.deps.backend.explainSync(app);
    const readable = new Map<string, boolean>();
    const mayGet = (project: string) => {
      if (!readable.has(project))
        readable.set(project, this.deps.authz.decide(ctx.principal, 'projects', 'get', project).allowed);
      return readable.get(project)!;
    };
    return {
      ...e,
      rules: e.rules.map((r) =>
        mayGet(r.project)
          ? r
          : { ...r, server: '', namespace: '', defaultServiceAccount: '', withheld: true },
      ),
      ...(e.matchedPattern && e.matchedProject && !mayGet(e.matchedProject)
        ? { matchedPattern: { server: '', namespace: '' } }
        : {}),
    };
  }

  async list(ctx: RequestContext, q: ResourcesQuery): Promise<apiv1.ManagedResourcesResponse> {
    const app = await this.authorized(ctx, { ...q, name: q.applicationName });
    const { items } = await this.deps.backend.managedResources(app);
    // Argo CD's optional narrowing to one resource.
    const keep = (r: apiv1.ResourceDiff) =>
      (!q.namespace || r.namespace === q.namespace) &&
      (!q.name || r.name === q.name) &&
      (!q.group || r.group === q.group) &&
      (!q.kind || r.kind === q.kind);
    return { items: items.filter(keep) };
  }
}
