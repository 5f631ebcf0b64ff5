// The appset service as its own process, configured through the environment as in production
// (appset-harness.ts): it migrates, serves AppSetService over mutual TLS to the api acting for a
// user, and when the api it calls back is unreachable it refuses the write and stores nothing.
// The whole story with the real api (two tenants, git pushes, delete) is appset-story.test.ts.
import { Metadata, credentials, status } from '@grpc/grpc-js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appsetv1, unary } from '@capstan/proto';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
// The harness's module instance: one PKI per run.
import { testPki } from '../src/infra/index.js';
import { createPrivateKey, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import {
  appsetTokens,
  reserveAppsetAddress,
  startAppsetProcess,
  type AppsetProcess,
} from './appset-harness.js';

describe('appset service process', () => {
  let db: TestDatabase;
  let bus: TestBus;
  let appset: AppsetProcess;
  let client: appsetv1.AppSetServiceClient;
  const tokens = appsetTokens();

  beforeAll(async () => {
    [db, bus] = await Promise.all([createTestDatabase(), createTestBus('appsetproc')]);
    const [apiAddress, address] = await Promise.all([reserveAppsetAddress(), reserveAppsetAddress()]);
    appset = await startAppsetProcess({
      databaseUrl: db.url,
      bus,
      address,
      tokens,
      apiAddress, // nothing listens there
      repoAddress: apiAddress,
      repoToken: 'r'.repeat(40),
    });
    const pki = await testPki();
    const m = pki.material('api');
    client = new appsetv1.AppSetServiceClient(appset.grpcAddress, credentials.createSsl(m.ca, m.key, m.cert));
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await appset?.stop();
    await bus?.cleanup();
    await db?.drop();
  });

  async function asApi(): Promise<Metadata> {
    const pki = await testPki();
    const md = new Metadata();
    md.set('authorization', `Bearer ${tokens.apiToAppset}`);
    // What the api mints for a user's request (holder api, audience appset), signed with the run's key.
    const delegation = await new SignJWT({ hld: 'api', kind: 'user' })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'capstan-delegation+jwt' })
      .setIssuer('capstan-api')
      .setSubject('alice')
      .setAudience('appset')
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime('60s')
      .sign(createPrivateKey(pki.delegation.privateKeyPem));
    md.set('capstan-delegation', delegation);
    return md;
  }

  it('answers the api acting for a user', async () => {
    await expect(
      unary(client.get.bind(client), { name: 'guestbook', namespace: '' }, { metadata: await asApi() }),
    ).rejects.toMatchObject({ code: status.NOT_FOUND });
  });

  it('stores nothing when the api cannot be reached to check the caller', async () => {
    const manifestJson = JSON.stringify({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'ApplicationSet',
      metadata: { name: 'guestbook' },
      spec: {
        generators: [{ list: { elements: [{ cluster: 'dev' }] } }],
        template: {
          metadata: { name: '{{cluster}}-guestbook' },
          spec: {
            project: 'default',
            source: { repoURL: 'https://git.example.com/apps.git', path: 'guestbook' },
            destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' },
          },
        },
      },
    });
    await expect(
      unary(
        client.upsert.bind(client),
        { manifestJson, upsert: false, dryRun: false, delegations: { api: 'x', repo: 'y' } },
        { metadata: await asApi(), timeoutMs: 90_000 },
      ),
    ).rejects.toMatchObject({ code: status.UNAVAILABLE, details: 'the api service is unavailable' });
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const rows = await c.query('select count(*)::int as n from appset.events');
    await c.end();
    expect(rows.rows[0].n).toBe(0);
  }, 120_000);
});
