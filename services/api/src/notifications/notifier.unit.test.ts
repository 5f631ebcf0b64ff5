import { describe, expect, it } from 'vitest';
import { readNotificationsConfig } from '@capstan/policy';
import { MAX_DESTINATIONS, conditionKey, plan } from './notifier.js';
import { resolveSecretRefs } from './notifications-config.js';
import { backoffOf } from './delivery.js';
import { send, targetOf } from './senders.js';

const config = readNotificationsConfig({
  'trigger.on-sync-succeeded': "- when: app.status.operationState.phase in ['Succeeded']\n  send: [a, b]",
  'trigger.on-deployed':
    "- when: app.status.operationState.phase in ['Succeeded']\n  oncePer: app.status.operationState?.syncResult?.revision\n  send: [a]",
  'service.webhook.hook': 'url: http://127.0.0.1:1/',
  'service.slack': 'apiURL: http://127.0.0.1:1/slack',
});
const app = (phase: string, revision = 'abc') => ({
  app: { status: { operationState: { phase, syncResult: { revision } } } },
});
const sub = (trigger: string, service: string) => `notifications.argoproj.io/subscribe.${trigger}.${service}`;

describe('notifier: what the subscriptions of an Application say', () => {
  it('plans one notification per recipient of a true condition, with Argo-shaped state keys', () => {
    const warnings: string[] = [];
    const p = plan(
      config,
      {
        annotations: { [sub('on-sync-succeeded', 'slack')]: 'a; b', [sub('on-sync-succeeded', 'hook')]: '' },
      },
      app('Succeeded'),
      (m) => warnings.push(m),
    );
    expect(p.map((x) => [x.service, x.recipient, x.triggered, x.templates])).toEqual([
      ['hook', '', true, ['a', 'b']],
      ['slack', 'a', true, ['a', 'b']],
      ['slack', 'b', true, ['a', 'b']],
    ]);
    expect(p[1]!.key).toMatch(/^on-sync-succeeded:\[0\]\.[0-9a-f]{12}:slack:a$/);
    expect(warnings).toEqual([]);
    expect(
      plan(
        config,
        { annotations: { [sub('on-sync-succeeded', 'slack')]: 'a' } },
        app('Running'),
        () => {},
      )[0],
    ).toMatchObject({
      triggered: false,
      keep: false,
    });
  });

  it('keys an oncePer condition by its value (kept when false), and warns about an unknown trigger or service', () => {
    const c = config.triggers.get('on-deployed')![0]!;
    expect(conditionKey(0, c, app('Succeeded', 'r1'))).not.toBe(conditionKey(0, c, app('Succeeded', 'r2')));
    expect(conditionKey(0, c, app('Succeeded', 'r1'))).toMatch(/:r1$/);
    const warnings: string[] = [];
    const p = plan(
      config,
      {
        annotations: {
          [sub('on-deployed', 'slack')]: 'x',
          [sub('on-nothing', 'slack')]: 'x',
          [sub('on-deployed', 'teams')]: 'x',
        },
      },
      app('Succeeded'),
      (m) => warnings.push(m),
    );
    expect(p).toHaveLength(1);
    expect(p[0]!.keep).toBe(true);
    expect(warnings.sort()).toEqual([
      'subscription on-deployed.teams: no such service',
      'subscription on-nothing.slack: no such trigger',
    ]);
  });

  it('adds the default subscriptions whose selector matches the labels, once per destination', () => {
    const withDefaults = readNotificationsConfig({
      'trigger.on-sync-succeeded': "- when: app.status.operationState.phase in ['Succeeded']\n  send: [a]",
      'service.slack': 'apiURL: http://127.0.0.1:1/slack',
      subscriptions:
        '- recipients: [slack:ops, slack:dev]\n  triggers: [on-sync-succeeded]\n  selector: env=prod, team!=b',
    });
    expect(withDefaults.problems).toEqual([]);
    const dests = (labels: Record<string, string>) =>
      plan(
        withDefaults,
        { labels, annotations: { [sub('on-sync-succeeded', 'slack')]: 'ops' } },
        app('Succeeded'),
        () => {},
      ).map((x) => x.recipient);
    expect(dests({ env: 'prod', team: 'a' })).toEqual(['ops', 'dev']);
    expect(dests({ env: 'prod', team: 'b' })).toEqual(['ops']);
    expect(
      readNotificationsConfig({
        subscriptions: '- recipients: [slack:x]\n  triggers: [t]\n  selector: env in (a)',
      }).problems,
    ).toEqual([
      'argocd-notifications-cm: subscriptions: [0].selector: "env in (a)": only key=value, key==value and key!=value are supported',
    ]);
  });

  it("bounds the destinations of one Application (annotations are the tenant's)", () => {
    const many = Array.from({ length: MAX_DESTINATIONS + 5 }, (_, i) => `r${i}`).join(';');
    const warnings: string[] = [];
    const p = plan(
      config,
      {
        annotations: {
          [sub('on-sync-succeeded', 'slack')]: many,
          [sub('on-deployed', 'slack')]: 'r0',
        },
      },
      app('Succeeded'),
      (m) => warnings.push(m),
    );
    expect(p).toHaveLength(MAX_DESTINATIONS + 1);
    expect(p.filter((x) => x.trigger === 'on-deployed')).toHaveLength(1);
    expect(warnings).toHaveLength(5);
    expect(warnings[0]).toBe(
      `more than ${MAX_DESTINATIONS} destinations: slack:r${MAX_DESTINATIONS} ignored`,
    );
  });
});

describe('notifications: secrets, targets, backoff', () => {
  it('resolves $key references from argocd-notifications-secret, leaving unknown ones', () => {
    const secrets = new Map([['token', 's3cr3t']]);
    expect(resolveSecretRefs('Bearer $token', secrets)).toBe('Bearer s3cr3t');
    expect(resolveSecretRefs('$other', secrets)).toBe('$other');
  });

  it('reports targets without userinfo, query or fragment', () => {
    const hook = {
      kind: 'webhook' as const,
      name: 'h',
      url: 'https://user:pw@hooks.example.com/base?token=x',
      headers: [],
    };
    expect(targetOf(hook, '/deploy/guestbook')).toBe('https://hooks.example.com/base/deploy/guestbook');
    const slack = {
      kind: 'slack' as const,
      name: 'slack' as const,
      url: 'https://hooks.slack.com/services/T0/B0/XYZ',
    };
    expect(targetOf(slack)).toBe('https://hooks.slack.com');
    expect(
      targetOf({ kind: 'email', name: 'email', host: 'smtp.example.com', port: 587, from: 'a@example.com' }),
    ).toBe('smtp://smtp.example.com:587');
  });

  it('refuses a target that is not http(s) (a $key resolved to one) without connecting', async () => {
    const n = {
      message: 'm',
      title: '',
      subject: '',
      webhook: { h: { method: 'POST', path: '', body: '' } },
    };
    const hook = { kind: 'webhook' as const, name: 'h', url: 'file:///etc/passwd', headers: [] };
    expect(await send(hook, '', n, 1000)).toEqual({
      ok: false,
      httpStatus: 0,
      reason: 'refused: file: is not http(s)',
    });
    const email = {
      kind: 'email' as const,
      name: 'email' as const,
      host: '127.0.0.1',
      port: 1,
      from: 'a@example.com',
    };
    expect((await send(email, '', n, 1000)).reason).toBe('refused: no recipient address');
  });

  it('doubles the delay after each attempt, capped at 5 minutes', () => {
    expect([1, 2, 3, 20].map((a) => backoffOf({ backoffMs: 1000 }, a))).toEqual([1000, 2000, 4000, 300_000]);
  });
});
