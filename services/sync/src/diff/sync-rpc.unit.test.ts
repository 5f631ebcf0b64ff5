// Who may call SyncService.ManagedResources: the api's service identity only. The handler is
// driven directly (no server): the refusals happen before anything is read.
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ServiceTokens } from '@capstan/service-identity';
import type { Logger } from '@capstan/service';
import { syncServiceImplementation } from './sync-rpc.js';
import type { ManagedResourcesDeps } from './managed-resources.js';

const API = 'a'.repeat(40);
const REPO = 'r'.repeat(40);
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as unknown as Logger;

const SETTING = {
  scope: 'sync',
  key: 'sync.parallelism',
  value: '4',
  source: 'default',
  effect: 'environment CAPSTAN_SYNC_PARALLELISM',
};

const implementation = () =>
  syncServiceImplementation({
    // Never reached: every case here is refused before the Application is looked up.
    ...({} as ManagedResourcesDeps),
    auth: { tokens: new ServiceTokens(`api=${API},repo=${REPO}`), requireCertificate: false },
    logger: silent,
    health: { assess: () => undefined },
    effectiveSettings: (showSource) => [{ ...SETTING, source: showSource ? 'default value' : 'default' }],
  });

function call(
  token: string | undefined,
  request = { namespace: '', name: 'guestbook' },
  method: 'managedResources' | 'resourceTree' | 'resourceEvents' | 'explainSync' = 'managedResources',
) {
  const impl = implementation() as unknown as Record<
    string,
    (call: never, cb: (err: unknown) => void) => void
  >;
  const metadata = new Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  return new Promise<Partial<ServiceError> | null>((resolve) => {
    impl[method]!({ metadata, request, getAuthContext: () => ({}) } as never, (err) =>
      resolve(err as Partial<ServiceError> | null),
    );
  });
}

describe('SyncService.ManagedResources callers', () => {
  it('refuses a call without a service token', async () => {
    expect((await call(undefined))?.code).toBe(status.UNAUTHENTICATED);
  });
  it('refuses another service (repo): only the api may ask', async () => {
    const err = await call(REPO);
    expect(err?.code).toBe(status.PERMISSION_DENIED);
    expect(err?.details).toContain('service repo may not call ManagedResources');
  });
  it('accepts the api, and then wants an Application name', async () => {
    expect((await call(API, { namespace: '', name: '' }))?.code).toBe(status.INVALID_ARGUMENT);
  });
  it('guards ResourceTree, ResourceEvents and ExplainSync the same way', async () => {
    for (const method of ['resourceTree', 'resourceEvents', 'explainSync'] as const) {
      expect((await call(undefined, undefined, method))?.code, method).toBe(status.UNAUTHENTICATED);
      const err = await call(REPO, undefined, method);
      expect(err?.code, method).toBe(status.PERMISSION_DENIED);
      expect((await call(API, { namespace: '', name: '' }, method))?.code, method).toBe(
        status.INVALID_ARGUMENT,
      );
    }
  });
});

describe('SyncService.Settings', () => {
  const settings = (token: string) => {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    return new Promise<{ err: Partial<ServiceError> | null; res: unknown }>((resolve) => {
      implementation().settings(
        { metadata, request: { showSource: true }, getAuthContext: () => ({}) } as never,
        (err, res) => resolve({ err: err as Partial<ServiceError> | null, res }),
      );
    });
  };
  it("answers the api with the service's effective settings, in full when asked", async () => {
    expect(await settings(API)).toEqual({
      err: null,
      res: { settings: [{ ...SETTING, source: 'default value' }] },
    });
  });
  it('refuses another service (repo)', async () => {
    expect((await settings(REPO)).err?.code).toBe(status.PERMISSION_DENIED);
  });
});
