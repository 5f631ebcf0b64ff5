// Argo CD's configuration objects given to the api as files at start (--argocd-config-dir), real
// PostgreSQL and NATS: the keys the api reads from the object itself (admin.enabled,
// users.anonymous.enabled, url, oidc.config, scopes, argocd-secret's oidc.clientSecret, the
// notifications objects) take effect from the files while no version is applied, `capstan admin
// settings --show-source` names the file, and an applied version replaces the file's object whole.
// The api's own settings shown are those in force (LiveSettings), not the start-up values.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, startHarness, type Harness } from '../test-support/harness.js';
import { httpClient } from '../test-support/fixtures.js';

const OIDC_SECRET = 'oidc-client-secret-from-a-file-0123';

const FILES = {
  'argocd-cm.yaml': `apiVersion: v1
kind: ConfigMap
metadata: { name: argocd-cm }
data:
  admin.enabled: "false"
  users.anonymous.enabled: "true"
  url: https://capstan.example/
  oidc.config: |
    name: Example
    issuer: https://idp.example
    clientID: capstan
    clientSecret: $oidc.clientSecret
`,
  'argocd-rbac-cm.yaml': `apiVersion: v1
kind: ConfigMap
metadata: { name: argocd-rbac-cm }
data:
  policy.default: role:admin
  policy.matchMode: glob
  scopes: "[groups, email]"
`,
  'argocd-secret.yaml': `apiVersion: v1
kind: Secret
metadata: { name: argocd-secret }
stringData:
  oidc.clientSecret: ${OIDC_SECRET}
`,
  'argocd-notifications-cm.yaml': `apiVersion: v1
kind: ConfigMap
metadata: { name: argocd-notifications-cm }
data:
  service.webhook.hook: |
    url: http://127.0.0.1:1/
  trigger.on-sync-succeeded: |
    - when: app.status.operationState.phase in ['Succeeded']
      send: [synced]
  template.synced: |
    message: "{{.app.metadata.name}} synced"
`,
};

interface Row {
  scope: string;
  key: string;
  value: string;
  source: string;
  effect: string;
}

describe('Argo CD settings given to the api as files at start', () => {
  let h: Harness;
  let dir: string;
  let admin: string;
  const http = () => httpClient(h);
  const shown = async (token?: string) => {
    const r = await http()('GET', '/api/v1/settings?showSource=true', token);
    expect(r.status).toBe(200);
    return (r.body as { settings: Row[] }).settings;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-argocd-files-'));
    for (const [name, text] of Object.entries(FILES)) writeFileSync(join(dir, name), text);
    h = await startHarness({ 'argocd.config-dir': dir, 'rbac.default-role': 'role:readonly' });
  });
  afterAll(async () => h?.stop());

  it('names no key of the files as ignored at start', () => {
    const warnings = h.service.context.configReport?.warnings ?? [];
    expect(warnings.filter((w) => /not read by|not implemented|unknown key/.test(w))).toEqual([]);
  });

  it('takes admin.enabled, users.anonymous.enabled and policy.default from the files', async () => {
    // admin.enabled "false": the bootstrap admin may not log in.
    await expect(h.login('admin', ADMIN_PASSWORD)).rejects.toThrow();
    // users.anonymous.enabled "true" with policy.default role:admin (the file's, over the
    // configuration file's role:readonly): a call without a token is served, and may do what an admin may.
    expect((await http()('GET', '/api/v1/projects')).status).toBe(200);
    const created = await http()('POST', '/api/v1/account', undefined, {
      name: 'alice',
      password: 'alice-password',
    });
    expect(created.status).toBe(200);
  });

  it('reads single sign-on and notifications from the files, the client secret from the argocd-secret file', async () => {
    const sso = await h.api.services.sso.settings.current();
    expect(sso).toMatchObject({
      url: 'https://capstan.example',
      scopes: ['groups', 'email'],
      clientSecret: OIDC_SECRET,
      oidc: { issuer: 'https://idp.example', clientID: 'capstan' },
    });
    const notifications = await h.api.services.notifications.current();
    expect([...notifications.triggers.keys()]).toEqual(['on-sync-succeeded']);
    expect([...notifications.services.keys()]).toEqual(['hook']);
  });

  it('shows every key of the files with the file as source, secrets as set only', async () => {
    const rows = await shown();
    const cmFile = join(dir, 'argocd-cm.yaml');
    expect(rows).toContainEqual({
      scope: 'argocd-cm',
      key: 'admin.enabled',
      value: 'false',
      source: `argocd-file ${cmFile}`,
      effect: 'api: accounts (live)',
    });
    expect(rows).toContainEqual(
      expect.objectContaining({ scope: 'argocd-rbac-cm', key: 'scopes', value: '[groups, email]' }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({ scope: 'argocd-secret', key: 'oidc.clientSecret', value: '(set)' }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        scope: 'api',
        key: 'rbac.default-role',
        value: 'role:admin',
        source: expect.stringContaining('argocd-rbac-cm: policy.default') as unknown as string,
      }),
    );
    expect(JSON.stringify(rows)).not.toContain(OIDC_SECRET);
  });

  it('replaces the argocd-cm file with an applied version, whole: the admin logs in, anonymous calls are refused', async () => {
    // Anonymous is role:admin here (the file's policy.default), so it may apply.
    const applied = await http()('POST', '/api/v1/apply', undefined, {
      manifests: `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: argocd-cm }\ndata:\n  application.sync.impersonation.enabled: "false"\n`,
    });
    expect(applied.status).toBe(200);
    // admin.enabled and users.anonymous.enabled were the file's only: gone with it.
    expect((await http()('GET', '/api/v1/projects')).status).toBe(401);
    admin = await h.login('admin', ADMIN_PASSWORD);
    const rows = await shown(admin);
    expect(rows.some((r) => r.scope === 'argocd-cm' && r.source.startsWith('argocd-file'))).toBe(false);
    expect(rows).toContainEqual(
      expect.objectContaining({ scope: 'argocd-cm', key: 'application.sync.impersonation.enabled' }),
    );
  });

  it("shows the api's own settings in force after an apply, not its start-up values", async () => {
    const r = await http()('POST', '/api/v1/apply', admin, {
      manifests: `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: argocd-rbac-cm }\ndata:\n  policy.default: role:readonly\n`,
    });
    expect(r.status).toBe(200);
    const rows = await shown(admin);
    expect(rows).toContainEqual(
      expect.objectContaining({
        scope: 'api',
        key: 'rbac.default-role',
        value: 'role:readonly',
        source: 'argocd-rbac-cm: policy.default (applied v1)',
      }),
    );
    expect(rows.some((x) => x.scope === 'argocd-rbac-cm' && x.source.startsWith('argocd-file'))).toBe(false);
  });
});
