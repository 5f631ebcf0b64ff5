// The AppSetService gRPC handlers: authenticate (only the api, for a user), translate messages to the
// flows and back. Errors leave as gRPC statuses with the workspace mapping, field violations in a
// trailer; internal errors are logged and not described.
import type { handleUnaryCall } from '@grpc/grpc-js';
import type { appsetv1 } from '@capstan/proto';
import { ValidationError, type EffectiveSetting, type Logger } from '@capstan/service';
import {
  authenticateCall,
  inServerSpan,
  peerService,
  toServiceError,
  type ServiceAuthenticator,
} from '@capstan/service-identity';
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import type { AppSetFlows, Caller, SetResult } from '../flows/appset-flows.js';
import { authenticateAppSetCall, type AppSetMethod, type UserCall } from './service-identity.js';

function callerOf(identity: UserCall, delegations: appsetv1.CallerDelegations | undefined): Caller {
  if (!delegations?.api)
    throw new ValidationError([
      { field: 'delegations.api', description: 'is required (the api mints it for appset)' },
    ]);
  return { actor: identity.actor, delegations: { api: delegations.api, repo: delegations.repo } };
}

const result = (r: SetResult): appsetv1.ApplicationSetResult => ({
  applicationSetJson: JSON.stringify(r.applicationSet),
  applications: r.applications,
});

const ref = (name: string, namespace: string) => {
  if (!name) throw new ValidationError([{ field: 'name', description: 'is required' }]);
  return { name, namespace: namespace || DEFAULT_CONTROL_NAMESPACE };
};

export function appSetServiceImplementation(deps: {
  auth: ServiceAuthenticator;
  flows: AppSetFlows;
  logger: Logger;
  /** This service's effective settings (`capstan admin settings`). */
  effectiveSettings: (showSource: boolean) => EffectiveSetting[];
}): appsetv1.AppSetServiceServer {
  const unary =
    <Req, Res>(
      method: AppSetMethod,
      fn: (req: Req, caller: UserCall) => Promise<Res>,
    ): handleUnaryCall<Req, Res> =>
    (call, callback) => {
      Promise.resolve()
        .then(() => authenticateAppSetCall(deps.auth, call, method))
        .then((caller) => inServerSpan('appset', method, call.metadata, () => fn(call.request, caller)))
        .then(
          (res) => callback(null, res),
          (err: unknown) => callback(toServiceError(err, deps.logger, method)),
        );
    };
  return {
    upsert: unary('upsert', async (req: appsetv1.UpsertRequest, caller) =>
      result(
        await deps.flows.upsert(
          { manifestJson: req.manifestJson, upsert: req.upsert, dryRun: req.dryRun },
          callerOf(caller, req.delegations),
        ),
      ),
    ),
    get: unary('get', async (req: appsetv1.ApplicationSetRef) =>
      result(await deps.flows.get(ref(req.name, req.namespace))),
    ),
    list: unary('list', async (req: appsetv1.ListRequest) => ({
      applicationSetsJson: (await deps.flows.list(req)).map((s) => JSON.stringify(s)),
    })),
    delete: unary('delete', async (req: appsetv1.DeleteRequest, caller) => ({
      applications: await deps.flows.delete(ref(req.name, req.namespace), callerOf(caller, req.delegations)),
    })),
    generate: unary('generate', async (req: appsetv1.GenerateRequest, caller) =>
      result(
        await deps.flows.generate({ manifestJson: req.manifestJson }, callerOf(caller, req.delegations)),
      ),
    ),
    // Not a user's data (the api checked `settings, get`): the api calls as itself, no delegation.
    settings: (call, callback) => {
      Promise.resolve()
        .then(() => authenticateCall(deps.auth, call.metadata, peerService(call), ['api'], 'settings'))
        .then(
          () => callback(null, { settings: deps.effectiveSettings(call.request.showSource) }),
          (err: unknown) => callback(toServiceError(err, deps.logger, 'settings')),
        );
    },
  };
}
