// Argo CD's configuration objects through `apply` (real PostgreSQL and NATS): argocd-cm with Argo's
// flat key is stored as a version, one audit row and one io.capstan.settings.changed.v1 event per
// change, nothing for an unchanged re-apply; a misspelled key is a warning naming the nearest key;
// a wrong value refuses naming the key; only role:admin may apply settings; an applied
// argocd-rbac-cm governs RBAC at once; argocd-secret's values appear in no row, event or answer
// (the webhook secrets Capstan implements are kept sealed only);
// settings.strict refuses an unknown key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { sql } from 'kysely';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { grpcError, httpClient } from '../test-support/fixtures.js';

const argocdCm = (data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: argocd-cm, namespace: argocd }\ndata:\n${Object.entries(
    data,
  )
    .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
    .join('\n')}\n`;

describe('applied Argo CD settings', () => {
  let h: Harness;
  let c: ReturnType<Harness['clients']>;
  let admin: string;
  let viewer: string;
  const apply = (token: string, manifests: string, dryRun = false) =>
    unary(c.apply.apply.bind(c.apply), { manifests, dryRun, strict: true }, { metadata: bearer(token) });
  const rows = async (q: ReturnType<typeof sql>) =>
    (await q.execute(h.api.services.db)).rows as Record<string, unknown>[];

  beforeAll(async () => {
    h = await startHarness({ 'rbac.default-role': 'role:readonly' });
    c = h.clients();
    admin = await h.login('admin', ADMIN_PASSWORD);
    const http = httpClient(h);
    await http('POST', '/api/v1/account', admin, { name: 'viewer', password: 'viewer-password' });
    viewer = await h.login('viewer', 'viewer-password');
  });
  afterAll(async () => h?.stop());

  it('stores argocd-cm with the flat key as a version, one audit row and one event, and warns about a typo', async () => {
    const r = await apply(
      admin,
      argocdCm({
        'application.sync.impersonation.enabled': 'true',
        'timeout.reconcilation': '60s',
      }),
    );
    expect(r.results).toEqual([
      expect.objectContaining({ kind: 'ConfigMap', name: 'argocd-cm', action: 'created' }),
    ]);
    expect(r.warnings).toEqual([
      'argocd-cm: timeout.reconcilation: unknown key "timeout.reconcilation" in argocd-cm (did you mean "timeout.reconciliation"?): ignored',
    ]);
    const again = await apply(admin, argocdCm({ 'application.sync.impersonation.enabled': 'false' }));
    expect(again.results[0]!.action).toBe('configured');
    const unchanged = await apply(admin, argocdCm({ 'application.sync.impersonation.enabled': 'false' }));
    expect(unchanged.results[0]!.action).toBe('unchanged');
    expect(
      await rows(sql`select version, data from api.settings where object = 'argocd-cm' order by version`),
    ).toEqual([
      {
        version: 1,
        data: { 'application.sync.impersonation.enabled': 'true', 'timeout.reconcilation': '60s' },
      },
      { version: 2, data: { 'application.sync.impersonation.enabled': 'false' } },
    ]);
    const audit = await rows(
      sql`select object, version, actor, changes from audit.settings_changes order by id`,
    );
    expect(audit).toHaveLength(2);
    expect(audit[1]).toMatchObject({
      object: 'argocd-cm',
      version: 2,
      actor: 'user:admin',
      changes: [
        { key: 'application.sync.impersonation.enabled', change: 'changed', before: 'true', after: 'false' },
        { key: 'timeout.reconcilation', change: 'removed', before: '60s' },
      ],
    });
    const events = await rows(
      sql`select envelope from api.events where stream_id = 'settings/argocd-cm' order by version`,
    );
    expect(
      events.map((e) => (e.envelope as { type: string; data: { version: number } }).data.version),
    ).toEqual([1, 2]);
    expect((events[0]!.envelope as { type: string }).type).toBe('io.capstan.settings.changed.v1');
  });

  it('refuses a wrong value naming the key, and writes nothing', async () => {
    const err = await grpcError(apply(admin, argocdCm({ 'application.sync.impersonation.enabled': 'yes' })));
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toContain('argocd-cm: application.sync.impersonation.enabled');
    expect(err.details).toContain('"yes"');
    expect(await rows(sql`select version from api.settings where object = 'argocd-cm'`)).toHaveLength(2);
  });

  it('lets only role:admin apply or read settings, and the refusal is audited', async () => {
    const err = await grpcError(
      apply(viewer, argocdCm({ 'application.sync.impersonation.enabled': 'true' })),
    );
    expect(err.code).toBe(status.PERMISSION_DENIED);
    const denied = await rows(
      sql`select resource, action, object from audit.access_decisions where subject like '%viewer' and decision = 'deny'`,
    );
    expect(denied).toContainEqual({ resource: 'settings', action: 'update', object: 'argocd-cm' });
    expect((await httpClient(h)('GET', '/api/v1/settings', viewer)).status).toBe(403);
  });

  it('governs RBAC with an applied argocd-rbac-cm at once', async () => {
    const http = httpClient(h);
    expect((await http('GET', '/api/v1/settings', viewer)).status).toBe(403);
    await apply(
      admin,
      `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: argocd-rbac-cm }\ndata:\n  policy.csv: |\n    p, role:settings-reader, settings, get, *, allow\n    g, viewer, role:settings-reader\n  policy.default: role:readonly\n`,
    );
    const shown = await http('GET', '/api/v1/settings?showSource=true', viewer);
    expect(shown.status).toBe(200);
    const settings = (
      shown.body as {
        settings: { scope: string; key: string; value: string; source: string; effect: string }[];
      }
    ).settings;
    expect(settings).toContainEqual(
      expect.objectContaining({
        scope: 'argocd-cm',
        key: 'application.sync.impersonation.enabled',
        value: 'false',
        effect: 'sync: application.sync.impersonation.enabled (live)',
        source: expect.stringMatching(/^applied argocd-cm v2 by user:admin at /),
      }),
    );
  });

  it('keeps the implemented argocd-secret values sealed only, and never publishes, audits or returns one', async () => {
    const secretValue = 'webhook-secret-value-0123456789';
    const harborValue = 'harbor-secret-value-0123456789';
    const r = await apply(
      admin,
      `apiVersion: v1\nkind: Secret\nmetadata: { name: argocd-secret }\nstringData:\n  webhook.github.secret: ${secretValue}\n  webhook.harbor.secret: ${harborValue}\n`,
    );
    expect(r.results[0]).toMatchObject({ kind: 'Secret', name: 'argocd-secret', action: 'created' });
    expect(r.warnings).toEqual([
      expect.stringContaining('webhook.harbor.secret: recognised but not implemented'),
    ]);
    const sealed = await rows(sql`select id, key, key_id from api.settings_secrets`);
    expect(sealed).toEqual([
      { id: 'argocd-secret/webhook.github.secret', key: 'webhook.github.secret', key_id: expect.any(String) },
    ]);
    const everywhere = JSON.stringify([
      r,
      await rows(sql`select * from api.settings`),
      await rows(sql`select * from api.settings_secrets`),
      await rows(sql`select * from api.events`),
      await rows(sql`select * from audit.settings_changes`),
      (await httpClient(h)('GET', '/api/v1/settings', admin)).body,
    ]);
    expect(everywhere).toContain('webhook.github.secret');
    expect(everywhere).not.toContain(secretValue);
    expect(everywhere).not.toContain(harborValue);
    expect(everywhere).not.toContain(Buffer.from(secretValue).toString('hex'));
    // Applied again without the key: its sealed value goes.
    await apply(admin, `apiVersion: v1\nkind: Secret\nmetadata: { name: argocd-secret }\nstringData: {}\n`);
    expect(await rows(sql`select id from api.settings_secrets`)).toEqual([]);
  });

  it("disables an account and limits its capabilities with argocd-cm's account keys, live", async () => {
    const login = () => h.login('viewer', 'viewer-password');
    await apply(admin, argocdCm({ 'accounts.viewer.enabled': 'false' }));
    await expect(login()).rejects.toThrow();
    // Its session of before is refused too.
    expect((await httpClient(h)('GET', '/api/v1/account', viewer)).status).toBe(401);
    // Created with the login capability only: argocd-cm gives it apiKey, then takes it back.
    await apply(admin, argocdCm({ 'accounts.viewer': 'login, apiKey' }));
    viewer = await login();
    expect((await httpClient(h)('POST', '/api/v1/account/viewer/token', viewer, {})).status).toBe(200);
    await apply(admin, argocdCm({ 'accounts.viewer': 'login' }));
    const token = await httpClient(h)('POST', '/api/v1/account/viewer/token', viewer, {});
    expect(token.status).toBe(400);
    expect(JSON.stringify(token.body)).toContain('does not have the apiKey capability');
    const bad = await grpcError(apply(admin, argocdCm({ 'accounts.viewer': 'login, root' })));
    expect(bad.details).toContain('unknown capability "root"');
  });

  it("serves calls without a token as the anonymous user with policy.default's rights while users.anonymous.enabled is on, live", async () => {
    const http = httpClient(h);
    expect((await http('GET', '/api/v1/projects')).status).toBe(401);
    await apply(admin, argocdCm({ 'users.anonymous.enabled': 'true' }));
    // The harness's default role is role:readonly: anonymous reads, and may not write.
    expect((await http('GET', '/api/v1/projects')).status).toBe(200);
    const write = await http('POST', '/api/v1/projects', undefined, {
      project: { metadata: { name: 'by-nobody' }, spec: {} },
    });
    expect(write.status).toBe(403);
    expect(
      await rows(
        sql`select resource, action, decision from audit.access_decisions where subject = 'user:anonymous' and object like '%by-nobody' order by id`,
      ),
    ).toEqual([{ resource: 'projects', action: 'create', decision: 'deny' }]);
    // A token that does not verify is still refused: anonymous is for calls that present nothing.
    expect((await http('GET', '/api/v1/projects', 'not.a.token')).status).toBe(401);
    // No account may take the name the audit rows give anonymous callers.
    const reserved = await http('POST', '/api/v1/account', admin, {
      name: 'anonymous',
      password: 'x-password-1',
    });
    expect(reserved.status).toBe(400);
    expect(JSON.stringify(reserved.body)).toContain('reserved for calls without a token');
    await apply(admin, argocdCm({ 'users.anonymous.enabled': 'false' }));
    expect((await http('GET', '/api/v1/projects')).status).toBe(401);
  });

  it('says when an applied argocd-cmd-params-cm key takes effect; server.log.level is live unless pinned', async () => {
    const r = await apply(
      admin,
      `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: argocd-cmd-params-cm }\ndata:\n  controller.operation.processors: "8"\n  server.log.level: debug\n`,
    );
    expect(r.warnings).toEqual([
      'argocd-cmd-params-cm: controller.operation.processors: read at start by the sync service: takes effect at its next start (as in Argo CD)',
    ]);
    // The harness pins log.level with CAPSTAN_LOG_LEVEL=warn: the applied level is shadowed, and
    // `capstan admin settings` says where the level in force comes from.
    expect(h.service.context.logger.level).toBe('warn');
    const shown = (await httpClient(h)('GET', '/api/v1/settings', admin)).body as {
      settings: { scope: string; key: string; value: string; source: string }[];
    };
    expect(shown.settings).toContainEqual(
      expect.objectContaining({ scope: 'api', key: 'log.level', value: 'warn', source: 'env' }),
    );
  });

  it('stores argocd-notifications-cm as a version and argocd-notifications-secret sealed, and refuses a trigger that does not read, naming it', async () => {
    const cm = (when: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: argocd-notifications-cm }\ndata:\n  service.webhook.hook: |\n    url: http://127.0.0.1:1/\n    headers: [{ name: Authorization, value: $hook-token }]\n  trigger.on-sync-succeeded: |\n    - when: ${when}\n      send: [synced]\n  template.synced: |\n    message: "{{.app.metadata.name}} synced"\n`;
    const r = await apply(admin, cm("app.status.operationState.phase in ['Succeeded']"));
    expect(r.results).toEqual([
      expect.objectContaining({ kind: 'ConfigMap', name: 'argocd-notifications-cm', action: 'created' }),
    ]);
    expect(r.warnings).toEqual([]);
    const bad = await grpcError(apply(admin, cm('len(app.metadata.name) > 3')));
    expect(bad.code).toBe(status.INVALID_ARGUMENT);
    expect(bad.details).toContain('argocd-notifications-cm: trigger.on-sync-succeeded');
    const secret = await apply(
      admin,
      `apiVersion: v1\nkind: Secret\nmetadata: { name: argocd-notifications-secret }\nstringData:\n  hook-token: Bearer s3cr3t-notify\n`,
    );
    expect(secret.results[0]).toMatchObject({ kind: 'Secret', name: 'argocd-notifications-secret' });
    expect(
      await rows(
        sql`select data, sensitive_keys from api.settings where object = 'argocd-notifications-secret'`,
      ),
    ).toEqual([{ data: {}, sensitive_keys: ['hook-token'] }]);
    expect(
      await rows(sql`select id from api.settings_secrets where object = 'argocd-notifications-secret'`),
    ).toEqual([{ id: 'argocd-notifications-secret/hook-token' }]);
    const trail = await rows(sql`select changes::text as c from audit.settings_changes`);
    expect(JSON.stringify(trail)).not.toContain('s3cr3t-notify');
  });

  it('refuses an unknown key under settings.strict', async () => {
    await h.restart({ 'settings.strict': true });
    c = h.clients();
    const err = await grpcError(apply(admin, argocdCm({ 'application.sync.impersonaton.enabled': 'true' })));
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toContain('did you mean "application.sync.impersonation.enabled"');
  });
});
