// Key rotation of the api's sealed rows (issue 10): the api re-seals at start-up, like repo. Start with
// k1; restart with k2 active and k1 kept: every sealed row (cluster credentials, the generated token
// signing key and delegation key, an applied argocd-secret's webhook secret and oidc.* keys) now
// carries k2 and still opens; restart without k1: still opens.
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { apiv1 } from '@capstan/proto';
import { parseKeyring } from '@capstan/sealing';
import { readSealedValue } from './settings/settings-secrets.js';
import {
  ADMIN_PASSWORD,
  SYNC_TOKEN,
  bearer,
  startHarness,
  unary,
  type Harness,
} from './test-support/harness.js';

const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');
const keyring = (active: string, keys: Record<string, string>) => JSON.stringify({ active, keys });
const CANARY = `canary-${randomBytes(6).toString('hex')}`;
const WEBHOOK_SECRET = `${CANARY}-webhook`;
const CLUSTERS = [
  { server: 'https://10.0.0.1:6443', name: 'prod', token: `${CANARY}-prod` },
  { server: 'https://10.0.0.2:6443', name: 'staging', token: `${CANARY}-staging` },
];

describe('api: sealed rows across a key rotation', () => {
  let h: Harness;
  let admin: string;
  let delegationKeyBefore: string;

  /** Every sealed row of the api with the key it carries. */
  const sealedRows = async () =>
    (
      await sql<{ row: string; key_id: string; ciphertext: Buffer }>`
        select 'cluster ' || server as row, key_id, ciphertext from api.cluster_credentials
        union all select 'signing key ' || id, key_id, ciphertext from api.signing_keys
        union all select 'settings secret ' || id, key_id, ciphertext from api.settings_secrets
        order by 1`.execute(h.api.services.db)
    ).rows;

  /** What the rows hold still opens: the old session token verifies, credentials read back, same key. */
  const expectEverythingOpens = async (keyId: string) => {
    const c = h.clients();
    for (const cluster of CLUSTERS) {
      const got = await unary(
        c.clusters.get.bind(c.clusters),
        { server: cluster.server, name: '' },
        { metadata: bearer(admin) },
      );
      expect(got.credentialKeyId).toBe(keyId);
      const sync = h.serviceClients('sync');
      const creds = await unary(
        sync.credentials.get.bind(sync.credentials),
        { server: cluster.server, name: '' },
        { metadata: bearer(SYNC_TOKEN) },
      );
      expect(creds.config?.bearerToken).toBe(cluster.token);
    }
    expect(h.api.services.delegations.publicKeyPem).toBe(delegationKeyBefore);
    // The webhook verifies a delivery signed with the applied secret.
    const body = JSON.stringify({ zen: 'ping' });
    const sig = createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex');
    const res = await fetch(`${h.httpUrl}/api/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-hub-signature-256': `sha256=${sig}`,
      },
      body,
    });
    expect(res.status).toBe(200);
    const ring = parseKeyring(keyring(keyId, keyId === 'k1' ? { k1: K1 } : { k2: K2 }));
    expect(await readSealedValue(h.api.services.db, ring, 'argocd-secret', 'oidc.clientSecret')).toBe(
      `${CANARY}-oidc`,
    );
  };

  beforeAll(async () => {
    // No configured signing or delegation key: both are generated and kept sealed.
    h = await startHarness({
      'encryption.keys': keyring('k1', { k1: K1 }),
      'auth.signing-key': '',
      'auth.delegation-key': '',
    });
    admin = await h.login('admin', ADMIN_PASSWORD);
    const c = h.clients();
    for (const cluster of CLUSTERS)
      await unary(
        c.clusters.create.bind(c.clusters),
        apiv1.ClusterCreateRequest.fromPartial({
          server: cluster.server,
          name: cluster.name,
          config: { bearerToken: cluster.token },
        }),
        { metadata: bearer(admin) },
      );
    delegationKeyBefore = h.api.services.delegations.publicKeyPem;
    await unary(
      c.apply.apply.bind(c.apply),
      {
        manifests: `apiVersion: v1\nkind: Secret\nmetadata: { name: argocd-secret }\nstringData:\n  webhook.github.secret: ${WEBHOOK_SECRET}\n  oidc.clientSecret: ${CANARY}-oidc\n`,
        dryRun: false,
        strict: false,
      },
      { metadata: bearer(admin) },
    );
  });
  afterAll(async () => h?.stop());

  it('seals every row with the active key k1 at first', async () => {
    const rows = await sealedRows();
    expect(rows.map((r) => [r.row, r.key_id])).toEqual([
      ['cluster https://10.0.0.1:6443', 'k1'],
      ['cluster https://10.0.0.2:6443', 'k1'],
      ['settings secret argocd-secret/oidc.clientSecret', 'k1'],
      ['settings secret argocd-secret/webhook.github.secret', 'k1'],
      ['signing key delegation', 'k1'],
      ['signing key tokens', 'k1'],
    ]);
    await expectEverythingOpens('k1');
  });

  it('re-seals every row with k2 when restarted with k2 active, and everything still opens', async () => {
    const before = await sealedRows();
    await h.restart({ 'encryption.keys': keyring('k2', { k1: K1, k2: K2 }) });
    const after = await sealedRows();
    expect(after.map((r) => r.key_id)).toEqual(['k2', 'k2', 'k2', 'k2', 'k2', 'k2']);
    for (const [i, row] of after.entries()) {
      expect(row.ciphertext.equals(before[i]!.ciphertext)).toBe(false);
      expect(row.ciphertext.toString('latin1')).not.toContain(CANARY);
    }
    await expectEverythingOpens('k2');
  });

  it('opens everything once k1 has left the keyring', async () => {
    await h.restart({ 'encryption.keys': keyring('k2', { k2: K2 }) });
    expect((await sealedRows()).map((r) => r.key_id)).toEqual(['k2', 'k2', 'k2', 'k2', 'k2', 'k2']);
    await expectEverythingOpens('k2');
    // A credential written now is sealed with k2 too.
    const c = h.clients();
    const added = await unary(
      c.clusters.create.bind(c.clusters),
      apiv1.ClusterCreateRequest.fromPartial({
        server: 'https://10.0.0.3:6443',
        name: 'dev',
        config: { bearerToken: `${CANARY}-dev` },
      }),
      { metadata: bearer(admin) },
    );
    expect(added.credentialKeyId).toBe('k2');
  });
});
