// Who may call the repo service, and for whom. Authentication is @capstan/service-identity's: a
// service token bound to the service its client certificate names (mutual TLS is required on the
// repo's port), and a user only through a delegation the api minted for that caller and for repo.
// This file holds repo's own policy: which services may call each method, and which methods act for
// a user and therefore refuse to run without a delegation. Everything else is refused.
import type { Metadata } from '@grpc/grpc-js';
import { PermissionDeniedError } from '@capstan/service';
import {
  authenticateCall,
  peerService,
  type CallIdentity,
  type PeerSource,
  type ServiceAuthenticator,
} from '@capstan/service-identity';

export type { CallIdentity as CallerIdentity } from '@capstan/service-identity';

/** Which services may call each method. */
export const methodPolicy: Record<string, readonly string[]> = {
  createCredential: ['api'],
  updateCredential: ['api'],
  getCredential: ['api'],
  listCredentials: ['api'],
  deleteCredential: ['api'],
  applyCredentialSecret: ['api'],
  lookupCredential: ['api', 'sync', 'appset'],
  resolveRevision: ['api', 'sync', 'appset'],
  generateManifests: ['api', 'sync', 'appset'],
  listDirectories: ['api', 'appset'],
  listFiles: ['api', 'appset'],
  settings: ['api'],
};

/** Credential management is always a user's request: the api must prove who (audit rows name them). */
const ACTS_FOR_A_USER = new Set([
  'createCredential',
  'updateCredential',
  'getCredential',
  'listCredentials',
  'deleteCredential',
  'applyCredentialSecret',
]);

export async function authenticateRepoCall(
  auth: ServiceAuthenticator,
  call: PeerSource & { metadata: Metadata },
  method: string,
): Promise<CallIdentity> {
  const caller = await authenticateCall(
    auth,
    call.metadata,
    peerService(call),
    methodPolicy[method] ?? [],
    method,
  );
  if (ACTS_FOR_A_USER.has(method) && !caller.delegation)
    throw new PermissionDeniedError(`${method} acts for a user: present the api's delegation`);
  return caller;
}
