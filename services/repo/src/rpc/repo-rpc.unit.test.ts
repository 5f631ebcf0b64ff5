import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { fieldViolationsOf, type repov1 } from '@capstan/proto';
import { createLogger } from '@capstan/service';
import { repoServiceImplementation, type RepoRpcDeps } from './repo-rpc.js';
import { ServiceTokens } from '@capstan/service-identity';

const TOKEN = 's'.repeat(40);
const URL_WITH_PASSWORD = 'https://alice:hunter2-secret@git.example.com/org/repo.git';

/** Deps whose use cases fail the test when reached: a refused URL must stop before any of them. */
function deps(): RepoRpcDeps {
  const unreachable = () => {
    throw new Error('a refused request reached a use case');
  };
  return {
    auth: { tokens: new ServiceTokens(`sync=${TOKEN}`), requireCertificate: true },
    credentials: { lookupForApplication: unreachable } as unknown as RepoRpcDeps['credentials'],
    checkouts: {} as RepoRpcDeps['checkouts'],
    generator: {} as RepoRpcDeps['generator'],
    listing: {} as RepoRpcDeps['listing'],
    watch: unreachable,
    logger: createLogger('repo-rpc-test', { level: 'silent' }),
    effectiveSettings: unreachable,
  };
}

function call<Req>(
  handler: (call: never, callback: never) => void,
  request: Req,
): Promise<Partial<ServiceError> | null> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${TOKEN}`);
  return new Promise((resolve) =>
    (handler as (c: unknown, cb: (err: Partial<ServiceError> | null) => void) => void)(
      {
        request,
        metadata,
        getAuthContext: () => ({ sslPeerCertificate: { subjectaltname: 'URI:spiffe://capstan/sync' } }),
      },
      (err) => resolve(err),
    ),
  );
}

const violatedFields = (err: Partial<ServiceError> | null) =>
  fieldViolationsOf({ metadata: err?.metadata ?? new Metadata() }).map((v) => v.field);

describe('repo RPC: repository URLs a checkout would fetch', () => {
  it('refuses a URL carrying a password before git (or anything else) sees it, naming the field', async () => {
    const impl = repoServiceImplementation(deps());
    const resolve = await call(impl.resolveRevision, {
      repoUrl: URL_WITH_PASSWORD,
      revision: 'main',
    } as repov1.ResolveRevisionRequest);
    expect(resolve?.code).toBe(status.INVALID_ARGUMENT);
    expect(violatedFields(resolve)).toEqual(['repoUrl']);
    expect(JSON.stringify(resolve?.details)).not.toContain('hunter2');

    const generate = await call(impl.generateManifests, {
      source: { repoUrl: URL_WITH_PASSWORD, targetRevision: 'main', path: '.' },
    } as repov1.GenerateManifestsRequest);
    expect(generate?.code).toBe(status.INVALID_ARGUMENT);
    expect(violatedFields(generate)).toEqual(['source.repoUrl']);
  });
});

describe('repo RPC: Settings', () => {
  it('is for the api only: another service is refused before the settings are read', async () => {
    const err = await call(repoServiceImplementation(deps()).settings, { showSource: false });
    expect(err?.code).toBe(status.PERMISSION_DENIED);
  });
});
