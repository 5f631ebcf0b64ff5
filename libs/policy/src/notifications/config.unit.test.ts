import { describe, expect, it } from 'vitest';
import { defaultSubscriptionsFor, readNotificationsConfig, subscriptionsOf } from './config.js';

// From Argo CD's notifications_catalog (install.yaml's argocd-notifications-cm).
const CATALOG: Record<string, string> = {
  'trigger.on-sync-succeeded': `- when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']
  description: Application syncing has succeeded
  send: [app-sync-succeeded]
  oncePer: app.status.operationState?.syncResult?.revision`,
  'trigger.on-deployed': `- when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded'] and app.status.health.status == 'Healthy' and (!time.Parse(app.status.health.lastTransitionTime).Add(1 * time.Minute).Before(time.Parse(app.status.operationState.finishedAt)) or time.Parse(app.status.health.lastTransitionTime).Before(time.Parse(app.status.operationState.startedAt)))
  description: Application is synced and healthy. Triggered once per commit.
  send: [app-deployed]
  oncePer: app.status.operationState?.syncResult?.revision`,
  'trigger.on-created': `- when: "true"\n  send: [app-created]\n  oncePer: app.metadata.name`,
  'template.app-sync-succeeded': `message: Application {{.app.metadata.name}} has been successfully synced.
webhook:
  receiver:
    method: POST
    path: /hooks
    body: '{"app": "{{.app.metadata.name}}"}'
email:
  subject: Application {{.app.metadata.name}} has been successfully synced.`,
  'service.webhook.receiver':
    'url: http://127.0.0.1:9999\nheaders:\n- name: Content-Type\n  value: application/json',
  'service.slack': 'apiURL: https://hooks.slack.example/services/T/B/x',
  'service.email': 'host: 127.0.0.1\nport: 2525\nfrom: capstan@example.com',
};

const deployedEnv = (healthyAt: string) => ({
  app: {
    status: {
      health: { status: 'Healthy', lastTransitionTime: healthyAt },
      operationState: {
        phase: 'Succeeded',
        startedAt: '2026-11-25T10:00:00Z',
        finishedAt: '2026-11-25T10:00:10Z',
      },
    },
  },
});

describe('argocd-notifications-cm', () => {
  it("reads the catalog's triggers, templates and services", () => {
    const c = readNotificationsConfig(CATALOG);
    expect(c.problems).toEqual([]);
    expect([...c.triggers.keys()]).toEqual(['on-created', 'on-deployed', 'on-sync-succeeded']);
    expect(c.triggers.get('on-sync-succeeded')![0]).toMatchObject({
      send: ['app-sync-succeeded'],
      oncePer: 'app.status.operationState?.syncResult?.revision',
    });
    expect(c.templates.get('app-sync-succeeded')).toEqual({
      message: 'Application {{.app.metadata.name}} has been successfully synced.',
      webhook: { receiver: { method: 'POST', path: '/hooks', body: '{"app": "{{.app.metadata.name}}"}' } },
      email: { subject: 'Application {{.app.metadata.name}} has been successfully synced.' },
    });
    expect(c.services.get('receiver')).toEqual({
      kind: 'webhook',
      name: 'receiver',
      url: 'http://127.0.0.1:9999',
      headers: [{ name: 'Content-Type', value: 'application/json' }],
    });
    expect(c.services.get('slack')).toMatchObject({ kind: 'slack' });
    expect(c.services.get('email')).toEqual({
      kind: 'email',
      name: 'email',
      host: '127.0.0.1',
      port: 2525,
      from: 'capstan@example.com',
    });
  });

  it('evaluates on-deployed natively: healthy within a minute of the sync, or healthy before it started', () => {
    const when = readNotificationsConfig(CATALOG).triggers.get('on-deployed')![0]!.when;
    expect(when.evaluate(deployedEnv('2026-11-25T10:00:30Z'))).toBe(true);
    expect(when.evaluate(deployedEnv('2026-11-25T09:00:00Z'))).toBe(true);
    expect(when.evaluate(deployedEnv('2026-11-25T10:05:00Z'))).toBe(true);
    const failed = deployedEnv('2026-11-25T10:00:30Z');
    failed.app.status.operationState.phase = 'Failed';
    expect(when.evaluate(failed)).toBe(false);
  });

  it('names every key it cannot read', () => {
    const c = readNotificationsConfig({
      'trigger.bad': '- when: time.Now() != nil\n  send: [x]',
      'trigger.shape': 'when: true',
      'service.webhook.nourl': 'headers: []',
      'service.email': 'host: h',
      'template.broken': '{',
      context: 'argocdUrl: https://x',
    });
    expect(c.problems).toEqual([
      'argocd-notifications-cm: context: not supported by Capstan',
      'argocd-notifications-cm: service.email: needs host, port and from',
      'argocd-notifications-cm: service.webhook.nourl: url: must be an http(s) URL',
      expect.stringMatching(/^argocd-notifications-cm: template.broken: /),
      'argocd-notifications-cm: trigger.bad: [0].when: function calls are not supported: "(" at position 8',
      'argocd-notifications-cm: trigger.shape: must be a list of conditions (when, send)',
    ]);
  });
});

describe('argocd-notifications-cm defaults', () => {
  it('fills what a key leaves out', () => {
    const c = readNotificationsConfig({
      'template.bare': 'webhook:\n  receiver: {}',
      'template.empty': '{}',
      'service.slack': 'url: http://127.0.0.1:1/slack',
      'service.email': 'host: smtp\nfrom: a@b\nusername: u\npassword: p',
      'service.webhook.plain': 'url: https://h/x',
      'trigger.minimal': '- when: "false"\n  send: [bare]',
    });
    expect(c.problems).toEqual([]);
    expect(c.templates.get('bare')).toEqual({
      message: '',
      webhook: { receiver: { method: 'GET', path: '', body: '' } },
    });
    expect(c.templates.get('empty')).toEqual({ message: '', webhook: {} });
    expect(c.services.get('slack')).toEqual({
      kind: 'slack',
      name: 'slack',
      url: 'http://127.0.0.1:1/slack',
    });
    expect(c.services.get('email')).toEqual({
      kind: 'email',
      name: 'email',
      host: 'smtp',
      port: 25,
      from: 'a@b',
      username: 'u',
      password: 'p',
    });
    expect(c.services.get('plain')).toEqual({
      kind: 'webhook',
      name: 'plain',
      url: 'https://h/x',
      headers: [],
    });
    expect(c.triggers.get('minimal')).toEqual([{ when: expect.anything(), send: ['bare'] }]);
    expect(c.triggers.get('minimal')![0]!.when.evaluate({})).toBe(false);
  });

  it('refuses a condition list entry without when or send', () => {
    expect(readNotificationsConfig({ 'trigger.x': '- send: [a]' }).problems).toEqual([
      'argocd-notifications-cm: trigger.x: [0]: needs when (a string) and send (a list of templates)',
    ]);
    expect(readNotificationsConfig({ 'service.slack': 'apiURL: ftp://x' }).problems).toEqual([
      'argocd-notifications-cm: service.slack: apiURL: must be an http(s) URL',
    ]);
  });
});

describe('subscriptions', () => {
  it('reads notifications.argoproj.io/subscribe.<trigger>.<service> annotations', () => {
    expect(
      subscriptionsOf({
        'notifications.argoproj.io/subscribe.on-sync-succeeded.slack': 'team-a; team-b ;',
        'notifications.argoproj.io/subscribe.on-health-degraded.receiver': '',
        'notifications.argoproj.io/subscribe.bad': 'x',
        'other/annotation': 'x',
      }),
    ).toEqual([
      { trigger: 'on-health-degraded', service: 'receiver', recipients: [] },
      { trigger: 'on-sync-succeeded', service: 'slack', recipients: ['team-a', 'team-b'] },
    ]);
    expect(subscriptionsOf(undefined)).toEqual([]);
  });
});

describe('default subscriptions (the subscriptions key)', () => {
  const read = (text: string) => readNotificationsConfig({ subscriptions: text });

  it('reads recipients, triggers and an equality-based selector, and matches labels', () => {
    const c = read(
      '- recipients: [slack:ops, email:a@example.com]\n  triggers: [on-sync-failed, on-health-degraded]\n  selector: env==prod,team!=b\n- recipients: [slack:all]\n  triggers: [on-created]',
    );
    expect(c.problems).toEqual([]);
    const subs = (labels: Record<string, string> | undefined) =>
      defaultSubscriptionsFor(c, labels).map((s) => `${s.trigger}.${s.service}:${s.recipients.join(';')}`);
    expect(subs({ env: 'prod' })).toEqual([
      'on-sync-failed.slack:ops',
      'on-sync-failed.email:a@example.com',
      'on-health-degraded.slack:ops',
      'on-health-degraded.email:a@example.com',
      'on-created.slack:all',
    ]);
    expect(subs({ env: 'prod', team: 'b' })).toEqual(['on-created.slack:all']);
    expect(subs(undefined)).toEqual(['on-created.slack:all']);
  });

  it('names what does not read', () => {
    expect(read('recipients: [x]').problems).toEqual([
      'argocd-notifications-cm: subscriptions: must be a list of { recipients, triggers, selector }',
    ]);
    expect(read('- recipients: [slack:x]').problems).toEqual([
      'argocd-notifications-cm: subscriptions: [0]: needs recipients and triggers (lists of strings)',
    ]);
    expect(read('- recipients: [ops]\n  triggers: [t]').problems).toEqual([
      'argocd-notifications-cm: subscriptions: [0].recipients: "ops": expected <service>:<recipient>',
    ]);
  });
});
