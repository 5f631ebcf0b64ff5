// Argo CD Notifications on the real stack (PostgreSQL, NATS, the Go template module): an applied
// argocd-notifications-cm and -secret, an Application subscribing by annotation, the sync service's
// lifecycle events on the bus; a local HTTP receiver (webhook and Slack-compatible) and a real SMTP
// receiver (smtp-server). A succeeded sync sends one webhook POST with the rendered body, one Slack
// POST and one email; a failing receiver is retried, then recorded as failed; a redelivered event
// and a later verdict of the same operation send nothing again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { SMTPServer } from 'smtp-server';
import {
  connectBus,
  newEvent,
  syncFailed,
  syncStarted,
  syncStatusChanged,
  syncSucceeded,
  type Bus,
} from '@capstan/events';
import { apiv1 } from '@capstan/proto';
import { ADMIN_PASSWORD, bearer, startHarness, unary, type Harness } from '../test-support/harness.js';
import { guestbook, httpClient, teamA } from '../test-support/fixtures.js';
import { createLogger } from '@capstan/service';
import { Notifier } from './notifier.js';

const application = { name: 'guestbook', namespace: 'argocd' };
const meta = { subject: 'applications/argocd/guestbook', actor: 'service:sync', source: 'capstan/sync' };
const identity = { impersonation: true, username: 'system:serviceaccount:team-a-prod:deployer' };
const TOKEN = 'Bearer hook-s3cr3t-token';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

async function eventually<T>(
  probe: () => Promise<T> | T,
  ok: (v: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not met in time: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const cm = (http: string, smtpPort: number) => `apiVersion: v1
kind: ConfigMap
metadata: { name: argocd-notifications-cm, namespace: argocd }
data:
  trigger.on-sync-succeeded: |
    - description: Application syncing has succeeded
      send: [app-sync-succeeded]
      when: app.status.operationState.phase in ['Succeeded']
  trigger.on-sync-failed: |
    - description: Application syncing has failed
      send: [app-sync-failed]
      when: app.status.operationState.phase in ['Error', 'Failed']
  trigger.on-created: |
    - description: Application is created.
      oncePer: app.metadata.name
      send: [app-created]
      when: "true"
  template.app-created: |
    message: "Application {{.app.metadata.name}} has been created in {{.app.spec.project}}."
  template.app-sync-succeeded: |
    message: "Application {{.app.metadata.name}} has been successfully synced at {{.app.status.operationState.finishedAt}}."
    title: "Synced {{.app.metadata.name}}"
    email:
      subject: "Application {{.app.metadata.name}} has been successfully synced."
    webhook:
      hook:
        method: POST
        path: /deployments/{{.app.metadata.name}}
        body: |
          {"app": {{ .app.metadata.name | quote }}, "phase": "{{.app.status.operationState.phase}}", "revision": "{{ .app.status.operationState.syncResult.revision | trunc 7 }}"}
  template.app-sync-failed: |
    message: "{{.app.metadata.name}} failed: {{.app.status.operationState.message}}"
    webhook:
      broken:
        method: POST
        body: '{"failed": "{{.app.metadata.name}}"}'
  service.webhook.hook: |
    url: ${http}/hooks
    headers:
      - name: Authorization
        value: $hook-token
  service.webhook.broken: |
    url: ${http}/fail
  service.slack: |
    apiURL: ${http}/slack
  service.email: |
    host: 127.0.0.1
    port: ${smtpPort}
    from: capstan@example.com
`;

describe('notifications: a sync event to webhook, Slack and email receivers', () => {
  let h: Harness;
  let admin: string;
  let sync: Bus;
  let c: ReturnType<Harness['clients']>;
  let http: Server;
  let smtp: SMTPServer;
  const received: Received[] = [];
  const mails: { to: string; raw: string }[] = [];
  const rows = async (q: ReturnType<typeof sql>) =>
    (await q.execute(h.api.services.db)).rows as Record<string, unknown>[];
  const at = (path: string) => received.filter((r) => r.url.startsWith(path));

  beforeAll(async () => {
    http = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        res.statusCode = req.url?.startsWith('/fail') ? 500 : 200;
        res.end('ok');
      });
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, done) {
        let raw = '';
        stream.on('data', (c: Buffer) => (raw += c.toString('utf8')));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), raw });
          done();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

    h = await startHarness(
      {
        'notifications.max-attempts': 3,
        'notifications.backoff-ms': 100,
        'notifications.timeout-ms': 15_000,
      },
      // No poll within the test (not a setting): every send, and every retry after its backoff, comes
      // from a wake-up (the notifier queued rows; the next retry fell due).
      { notifications: { pollMs: 3_600_000 } },
    );
    c = h.clients();
    admin = await h.login('admin', ADMIN_PASSWORD);
    const apply = (manifests: string) =>
      unary(
        c.apply.apply.bind(c.apply),
        { manifests, dryRun: false, strict: true },
        { metadata: bearer(admin) },
      );
    await apply(cm(base, smtpPort));
    await apply(
      `apiVersion: v1\nkind: Secret\nmetadata: { name: argocd-notifications-secret }\nstringData:\n  hook-token: ${TOKEN}\n`,
    );
    await unary(
      c.projects.create.bind(c.projects),
      { project: apiv1.Project.fromJSON(teamA), upsert: false },
      {
        metadata: bearer(admin),
      },
    );
    const app = guestbook('team-a');
    const annotations = {
      'notifications.argoproj.io/subscribe.on-sync-succeeded.hook': '',
      'notifications.argoproj.io/subscribe.on-sync-succeeded.slack': '#deploys',
      'notifications.argoproj.io/subscribe.on-sync-succeeded.email': 'ops@example.com',
      'notifications.argoproj.io/subscribe.on-sync-failed.broken': '',
    };
    await unary(
      c.applications.create.bind(c.applications),
      {
        application: apiv1.Application.fromJSON({ ...app, metadata: { ...app.metadata, annotations } }),
        upsert: false,
      },
      { metadata: bearer(admin) },
    );
    sync = await connectBus({ ...h.bus.connection('sync'), service: 'sync' });
  });
  afterAll(async () => {
    await sync?.close();
    await h?.stop();
    await new Promise((r) => http?.close(r));
    await new Promise((r) => smtp?.close(() => r(undefined)));
  });

  const started = (operationId: string) =>
    newEvent(syncStarted.type, { operationId, application, dryRun: false, attempt: 1 }, meta);

  it('sends one webhook POST with the rendered body and the secret header, one Slack POST and one email for a succeeded sync', async () => {
    const op = randomUUID();
    await sync.publish(started(op));
    const succeeded = newEvent(
      syncSucceeded.type,
      {
        operationId: op,
        application,
        revision: 'a1b2c3d4e5f6',
        dryRun: false,
        identity,
        resources: 1,
        pruned: 0,
      },
      meta,
    );
    await sync.publish(succeeded);
    await eventually(
      () => ({ hooks: at('/hooks').length, slack: at('/slack').length, mails: mails.length }),
      (v) => v.hooks >= 1 && v.slack >= 1 && v.mails >= 1,
    );
    const [hook] = at('/hooks');
    expect(hook).toMatchObject({ method: 'POST', url: '/hooks/deployments/guestbook' });
    expect(hook!.headers.authorization).toBe(TOKEN);
    expect(JSON.parse(hook!.body)).toEqual({ app: 'guestbook', phase: 'Succeeded', revision: 'a1b2c3d' });
    const slack = JSON.parse(at('/slack')[0]!.body) as { channel: string; text: string };
    expect(slack.channel).toBe('#deploys');
    expect(slack.text).toMatch(
      /^Synced guestbook\nApplication guestbook has been successfully synced at 20\d\d-/,
    );
    expect(mails[0]!.to).toBe('ops@example.com');
    expect(mails[0]!.raw).toContain('Subject: Application guestbook has been successfully synced.');
    expect(mails[0]!.raw).toContain('From: capstan@example.com');

    // The same event again, through the notifier (as a redelivery), and a later verdict of the same
    // operation: nothing more is queued or sent.
    const notifier = new Notifier({
      db: h.api.services.db,
      settings: h.api.services.notifications,
      logger: createLogger('api', { level: 'warn' }),
    });
    await notifier.onEvent(succeeded);
    await sync.publish(
      newEvent(
        syncStatusChanged.type,
        {
          application,
          sync: { status: 'Synced', revision: 'a1b2c3d4e5f6' },
          health: { status: 'Healthy' },
          resources: [],
          reconciledAt: new Date().toISOString(),
        },
        meta,
      ),
    );
    await eventually(
      () =>
        rows(sql`select count(*)::int as n from api.processed_events where consumer = 'api-notifications'`),
      (r) => Number(r[0]!.n) >= 3,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect({ hooks: at('/hooks').length, slack: at('/slack').length, mails: mails.length }).toEqual({
      hooks: 1,
      slack: 1,
      mails: 1,
    });
    expect(
      await rows(sql`select service, status, attempts from api.notification_deliveries order by service`),
    ).toEqual([
      { service: 'email', status: 'sent', attempts: 1 },
      { service: 'hook', status: 'sent', attempts: 1 },
      { service: 'slack', status: 'sent', attempts: 1 },
    ]);
  });

  it('retries a failing receiver with backoff, then records it as failed, in the table and the audit trail, never the secret', async () => {
    const op = randomUUID();
    await sync.publish(started(op));
    await sync.publish(
      newEvent(
        syncFailed.type,
        {
          operationId: op,
          application,
          phase: 'apply',
          reason: 'one or more objects failed to apply',
          identity,
        },
        meta,
      ),
    );
    const [failed] = await eventually(
      () =>
        rows(
          sql`select id, status, attempts, last_error from api.notification_deliveries where service = 'broken'`,
        ),
      (r) => r[0]?.status === 'failed',
    );
    expect(failed).toMatchObject({ status: 'failed', attempts: 3, last_error: 'HTTP 500' });
    expect(at('/fail')).toHaveLength(3);
    expect(JSON.parse(at('/fail')[0]!.body)).toEqual({ failed: 'guestbook' });
    const attempts = await rows(
      sql`select attempt, outcome, http_status, at from api.notification_attempts where delivery_id = ${failed!.id} order by attempt`,
    );
    expect(attempts.map((a) => a.outcome)).toEqual(['retrying', 'retrying', 'failed']);
    const gaps = attempts
      .slice(1)
      .map((a, i) => (a.at as Date).getTime() - (attempts[i]!.at as Date).getTime());
    expect(gaps[0]).toBeGreaterThanOrEqual(100);
    expect(gaps[1]).toBeGreaterThanOrEqual(200);
    const audit = await rows(
      sql`select application, trigger, service, target, attempt, outcome, http_status from audit.notification_deliveries order by id`,
    );
    expect(audit.filter((a) => a.service === 'broken')).toEqual(
      [1, 2, 3].map((attempt) => ({
        application: 'argocd/guestbook',
        trigger: 'on-sync-failed',
        service: 'broken',
        target: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/fail$/),
        attempt,
        outcome: attempt === 3 ? 'failed' : 'retrying',
        http_status: 500,
      })),
    );
    expect(audit.find((a) => a.service === 'hook')?.target).toMatch(/\/hooks\/deployments\/guestbook$/);
    const everything = JSON.stringify([
      await rows(sql`select * from audit.notification_deliveries`),
      await rows(sql`select * from api.notification_attempts`),
      await rows(sql`select id, last_error from api.notification_deliveries`),
    ]);
    expect(everything).not.toContain('s3cr3t');
    // Through the API: the failed attempts of the Application, and the chain holds.
    const http = httpClient(h);
    const denied = await http(
      'GET',
      '/api/v1/audit/notification_deliveries?application=guestbook&outcome=deny',
      admin,
    );
    expect(denied.status).toBe(200);
    expect((denied.body.rows as { fields: { service: string } }[]).map((r) => r.fields.service)).toEqual([
      'broken',
      'broken',
      'broken',
    ]);
    const verify = await http('POST', '/api/v1/audit/verify', admin, { table: 'notification_deliveries' });
    expect(JSON.stringify(verify.body)).toMatch(/"ok":true/);
    // The other receivers were not held up: the succeeded sync's notifications were all sent.
    expect(at('/hooks')).toHaveLength(1);
  });

  it('notifies on-created once per Application (its first event), whatever follows', async () => {
    const app = guestbook('team-a', 'created-app');
    const annotations = { 'notifications.argoproj.io/subscribe.on-created.slack': '#new' };
    await unary(
      c.applications.create.bind(c.applications),
      {
        application: apiv1.Application.fromJSON({ ...app, metadata: { ...app.metadata, annotations } }),
        upsert: false,
      },
      { metadata: bearer(admin) },
    );
    const verdict = (at: string) =>
      newEvent(
        syncStatusChanged.type,
        {
          application: { namespace: 'argocd', name: 'created-app' },
          sync: { status: 'OutOfSync', revision: 'a1b2c3d4e5f6' },
          health: { status: 'Missing' },
          resources: [],
          reconciledAt: at,
        },
        { ...meta, subject: 'applications/argocd/created-app' },
      );
    await sync.publish(verdict(new Date().toISOString()));
    const second = verdict(new Date(Date.now() + 1000).toISOString());
    await sync.publish(second);
    const created = () => at('/slack').filter((r) => r.body.includes('created-app'));
    await eventually(created, (r) => r.length >= 1);
    await eventually(
      () =>
        rows(
          sql`select count(*)::int as n from api.processed_events where consumer = 'api-notifications' and event_id = ${second.id}`,
        ),
      (r) => Number(r[0]!.n) === 1,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(created().map((r) => JSON.parse(r.body) as unknown)).toEqual([
      { channel: '#new', text: 'Application created-app has been created in team-a.' },
    ]);
  });
});
