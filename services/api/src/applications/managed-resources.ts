// Argo CD's ManagedResources (behind `capstan app diff`): the api authorizes the caller exactly as
// for reading the Application (RBAC applications/get, audited; a missing one looks forbidden), then
// asks the sync service, which reads the cluster as the Application's ServiceAccount. The api never
// reads a cluster itself, and the sync service answers only the api's service identity.
import type { apiv1 } from '@capstan/proto';
import { syncv1, unary } from '@capstan/proto';
import { UnavailableError } from '@capstan/service';
import { peerError, type ServiceClient } from '@capstan/service-identity';
import type { RequestContext } from '../support/request.js';
import type { ApplicationsService } from './applications.service.js';
import { askPeerSettings } from '../settings/settings-view.js';

export interface SyncBackend {
  managedResources(app: { namespace: string; name: string }): Promise<apiv1.ManagedResourcesResponse>;
  /** The peer's effective settings (`capstan admin settings`); absent when the peer is not configured. */
  settings?(showSource: boolean): Promise<apiv1.SettingEntry[]>;
}

/** Without sync.address, ManagedResources answers UNAVAILABLE, saying which setting is missing. */
export class UnconfiguredSyncBackend implements SyncBackend {
  managedResources(): Promise<apiv1.ManagedResourcesResponse> {
    throw new UnavailableError('the sync service is not configured (sync.address)');
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

  managedResources(app: { namespace: string; name: string }): Promise<apiv1.ManagedResourcesResponse> {
    return unary(
      this.client.managedResources.bind(this.client),
      syncv1.ManagedResourcesRequest.fromPartial(app),
      {
        metadata: this.identity.metadata(),
        timeoutMs: this.timeoutMs,
      },
    ).catch((err: unknown) => {
      throw peerError(err, 'sync');
    });
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
  constructor(private readonly deps: { applications: ApplicationsService; backend: SyncBackend }) {}

  async list(ctx: RequestContext, q: ResourcesQuery): Promise<apiv1.ManagedResourcesResponse> {
    const stored = await this.deps.applications.loadAuthorized(
      ctx,
      q.appNamespace,
      q.applicationName,
      'get',
      q.project || undefined,
    );
    const metadata = stored.application.metadata as { namespace?: string; name: string };
    const { items } = await this.deps.backend.managedResources({
      namespace: metadata.namespace ?? '',
      name: metadata.name,
    });
    // Argo CD's optional narrowing to one resource.
    const keep = (r: apiv1.ResourceDiff) =>
      (!q.namespace || r.namespace === q.namespace) &&
      (!q.name || r.name === q.name) &&
      (!q.group || r.group === q.group) &&
      (!q.kind || r.kind === q.kind);
    return { items: items.filter(keep) };
  }
}
