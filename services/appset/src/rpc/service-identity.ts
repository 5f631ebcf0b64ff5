// Who may call the appset service: only the api (its service token bound to its client certificate,
// mutual TLS), and always for a user: every method needs the api's user delegation with audience
// appset (an owner delegation is for background work and is refused here). Authentication itself is
// @capstan/service-identity's, as everywhere.
import type { Metadata } from '@grpc/grpc-js';
import { PermissionDeniedError } from '@capstan/service';
import {
  authenticateCall,
  peerService,
  type CallIdentity,
  type PeerSource,
  type ServiceAuthenticator,
} from '@capstan/service-identity';

export const APPSET_METHODS = ['upsert', 'get', 'list', 'delete', 'generate'] as const;
export type AppSetMethod = (typeof APPSET_METHODS)[number];

export interface UserCall extends CallIdentity {
  delegation: NonNullable<CallIdentity['delegation']>;
}

export async function authenticateAppSetCall(
  auth: ServiceAuthenticator,
  call: PeerSource & { metadata: Metadata },
  method: AppSetMethod,
): Promise<UserCall> {
  const caller = await authenticateCall(auth, call.metadata, peerService(call), ['api'], method);
  if (!caller.delegation || caller.delegation.kind !== 'user')
    throw new PermissionDeniedError(`${method} acts for a user: present the api's delegation`);
  return caller as UserCall;
}
