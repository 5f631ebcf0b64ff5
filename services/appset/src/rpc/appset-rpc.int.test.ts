// Who may call AppSetService, on the real server (mutual TLS with the run's PKI): only the api, with
// its token on its own certificate, and only with its user delegation for appset.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status, type ServiceError } from '@grpc/grpc-js';
import { fieldViolationsOf } from '@capstan/proto';
import { startService } from '@capstan/service';
import { appsetSettings } from '../settings.js';
import { startAppset } from '../appset-service.js';
import { startHarness, type Harness } from '../test-support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
}, 120_000);
afterAll(async () => {
  await h?.stop();
});

const get = (c: { get: unknown }) => c.get as never;
const code = async (p: Promise<unknown>) => {
  try {
    await p;
    return status.OK;
  } catch (err) {
    return (err as ServiceError).code;
  }
};

describe('AppSetService authentication', () => {
  it('serves the api acting for a user', async () => {
    // Authenticated and authorised: the answer is about the set (it does not exist).
    await expect(h.call(get, { name: 'nothing', namespace: '' })).rejects.toMatchObject({
      code: status.NOT_FOUND,
      details: 'applicationsets.argoproj.io "nothing" not found',
    });
  });

  it('refuses the api without a delegation, with an owner delegation, or one for another audience or holder', async () => {
    expect(await code(h.call(get, { name: 'x', namespace: '' }, { delegation: null }))).toBe(
      status.PERMISSION_DENIED,
    );
    const owner = await h.mint({ kind: 'owner', resource: 'applicationsets/argocd/x' });
    expect(await code(h.call(get, { name: 'x', namespace: '' }, { delegation: owner }))).toBe(
      status.PERMISSION_DENIED,
    );
    const forRepo = await h.mint({ audience: 'repo' });
    expect(await code(h.call(get, { name: 'x', namespace: '' }, { delegation: forRepo }))).toBe(
      status.PERMISSION_DENIED,
    );
    const forSync = await h.mint({ holder: 'sync' });
    expect(await code(h.call(get, { name: 'x', namespace: '' }, { delegation: forSync }))).toBe(
      status.PERMISSION_DENIED,
    );
  });

  it('refuses every other service, even with a valid token and certificate of its own', async () => {
    const forSync = await h.mint({ holder: 'sync' });
    expect(await code(h.call(get, { name: 'x', namespace: '' }, { as: 'sync', delegation: forSync }))).toBe(
      status.PERMISSION_DENIED,
    );
  });

  it("refuses the api's token on another service's certificate, and connections without a certificate", async () => {
    expect(await code(h.call(get, { name: 'x', namespace: '' }, { as: 'repo' }))).toBe(
      status.UNAUTHENTICATED,
    );
    expect(await code(h.call(get, { name: 'x', namespace: '' }, { as: 'none' }))).toBe(status.UNAVAILABLE);
  });

  it('refuses a self-declared actor, whoever sends it', async () => {
    expect(
      await code(h.call(get, { name: 'x', namespace: '' }, { extra: { 'capstan-on-behalf-of': 'admin' } })),
    ).toBe(status.PERMISSION_DENIED);
  });

  it('requires the caller delegations for the calls it makes back, naming the field', async () => {
    const upsert = (c: { upsert: unknown }) => c.upsert as never;
    const err = await h
      .call(upsert, { manifestJson: '{}', upsert: false, dryRun: false })
      .catch((e: ServiceError) => e);
    expect(err).toMatchObject({ code: status.INVALID_ARGUMENT });
    expect(fieldViolationsOf(err as ServiceError)).toEqual([
      { field: 'delegations.api', description: 'is required (the api mints it for appset)' },
    ]);
  });

  it("refuses to start without the api's delegation public key, naming the setting", async () => {
    await expect(
      startService({
        name: 'appset',
        settings: appsetSettings,
        sources: {
          argv: [],
          env: {
            DATABASE_URL: h.tdb.url,
            ...h.tbus.env('appset'),
            ...h.pki.env('appset'),
            CAPSTAN_HTTP_PORT: '0',
            CAPSTAN_GRPC_PORT: '0',
            CAPSTAN_AUTH_SERVICE_TOKENS: `api=${h.tokens.api}`,
          },
        },
        start: async (ctx) => {
          await startAppset(ctx);
        },
      }),
    ).rejects.toThrow(/auth\.delegation-public-key/);
  });
});
