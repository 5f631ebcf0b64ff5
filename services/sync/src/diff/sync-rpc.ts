// The SyncService gRPC handlers: only the api may call (mutual TLS, its service token); it has
// authorized the user already. Errors leave as gRPC statuses with the workspace mapping.
import type { handleUnaryCall, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import type { apiv1, syncv1 } from '@capstan/proto';
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import type { HealthAssessor } from '@capstan/health';
import { ValidationError, type EffectiveSetting, type Logger } from '@capstan/service';
import {
  authenticateCall,
  peerService,
  toServiceError,
  type ServiceAuthenticator,
} from '@capstan/service-identity';
import { managedResources, type ManagedResourcesDeps } from './managed-resources.js';
import { resourceEvents, resourceTree } from './resource-tree.js';
import { explainApplication } from './explanation.js';

/** The services that may call the sync service's internal API. */
export const SYNC_RPC_CALLERS = ['api'] as const;

type AppRef = { namespace: string; name: string };

export function syncServiceImplementation(
  deps: ManagedResourcesDeps & {
    auth: ServiceAuthenticator;
    logger: Logger;
    /** Health of live objects (the resource tree's badges). */
    health: HealthAssessor;
    /** This service's effective settings (`capstan admin settings`). */
    effectiveSettings: (showSource: boolean) => EffectiveSetting[];
  },
): syncv1.SyncServiceServer {
  /** One call about one Application: authenticated as the api, the Application named, `run` answers. */
  const appCall =
    <Req extends { namespace: string; name: string }, Res>(
      method: string,
      run: (app: AppRef, request: Req) => Promise<Res>,
    ): handleUnaryCall<Req, Res> =>
    (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
      Promise.resolve()
        .then(() => authenticateCall(deps.auth, call.metadata, peerService(call), SYNC_RPC_CALLERS, method))
        .then(async (caller) => {
          const { name } = call.request;
          if (!name) throw new ValidationError([{ field: 'name', description: 'is required' }]);
          const app = { namespace: call.request.namespace || DEFAULT_CONTROL_NAMESPACE, name };
          deps.logger.debug({ application: `${app.namespace}/${app.name}`, actor: caller.actor }, method);
          return run(app, call.request);
        })
        .then(
          (res) => callback(null, res),
          (err: unknown) => callback(toServiceError(err, deps.logger, method)),
        );
    };
  const settingsCall: handleUnaryCall<apiv1.GetSettingsRequest, apiv1.GetSettingsResponse> = (
    call,
    callback,
  ) => {
    Promise.resolve()
      .then(() => authenticateCall(deps.auth, call.metadata, peerService(call), SYNC_RPC_CALLERS, 'Settings'))
      .then(
        () => callback(null, { settings: deps.effectiveSettings(call.request.showSource) }),
        (err: unknown) => callback(toServiceError(err, deps.logger, 'Settings')),
      );
  };
  return {
    managedResources: appCall<syncv1.ManagedResourcesRequest, apiv1.ManagedResourcesResponse>(
      'ManagedResources',
      async (app) => ({ items: await managedResources(deps, app) }),
    ),
    resourceTree: appCall<syncv1.ManagedResourcesRequest, apiv1.ApplicationTree>('ResourceTree', (app) =>
      resourceTree(deps, app),
    ),
    resourceEvents: appCall<syncv1.ResourceEventsRequest, apiv1.EventList>('ResourceEvents', (app, r) =>
      resourceEvents(deps, app, {
        resourceNamespace: r.resourceNamespace,
        resourceName: r.resourceName,
        resourceUid: r.resourceUid,
      }),
    ),
    explainSync: appCall<syncv1.ManagedResourcesRequest, apiv1.SyncExplanation>('ExplainSync', (app) =>
      explainApplication(deps, app),
    ),
    settings: settingsCall,
  };
}
