// The SyncService gRPC handlers: only the api may call (mutual TLS, its service token); it has
// authorized the user already. Errors leave as gRPC statuses with the workspace mapping.
import type { handleUnaryCall } from '@grpc/grpc-js';
import type { apiv1, syncv1 } from '@capstan/proto';
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import { ValidationError, type EffectiveSetting, type Logger } from '@capstan/service';
import {
  authenticateCall,
  peerService,
  toServiceError,
  type ServiceAuthenticator,
} from '@capstan/service-identity';
import { managedResources, type ManagedResourcesDeps } from './managed-resources.js';

/** The services that may call the sync service's internal API. */
export const SYNC_RPC_CALLERS = ['api'] as const;

export function syncServiceImplementation(
  deps: ManagedResourcesDeps & {
    auth: ServiceAuthenticator;
    logger: Logger;
    /** This service's effective settings (`capstan admin settings`). */
    effectiveSettings: (showSource: boolean) => EffectiveSetting[];
  },
): syncv1.SyncServiceServer {
  const managedResourcesCall: handleUnaryCall<
    syncv1.ManagedResourcesRequest,
    apiv1.ManagedResourcesResponse
  > = (call, callback) => {
    Promise.resolve()
      .then(() =>
        authenticateCall(deps.auth, call.metadata, peerService(call), SYNC_RPC_CALLERS, 'ManagedResources'),
      )
      .then(async (caller) => {
        const { name } = call.request;
        if (!name) throw new ValidationError([{ field: 'name', description: 'is required' }]);
        const app = { namespace: call.request.namespace || DEFAULT_CONTROL_NAMESPACE, name };
        deps.logger.debug(
          { application: `${app.namespace}/${app.name}`, actor: caller.actor },
          'managed resources',
        );
        return { items: await managedResources(deps, app) };
      })
      .then(
        (res) => callback(null, res),
        (err: unknown) => callback(toServiceError(err, deps.logger, 'ManagedResources')),
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
  return { managedResources: managedResourcesCall, settings: settingsCall };
}
