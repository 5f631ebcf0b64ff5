// Argo CD Notifications' configuration (the ConfigMap argocd-notifications-cm) and subscriptions
// (annotations `notifications.argoproj.io/subscribe.<trigger>.<service>: <recipient>;<recipient>`),
// read and checked key by key (pure). A trigger's `when` is read with the expr subset of expr.ts; the
// catalog's on-deployed condition (which calls time.Parse) is recognised by its text and evaluated
// natively. Services: `service.webhook.<name>` (url, headers, basicAuth), `service.slack` (a
// Slack-compatible incoming-webhook URL), `service.email` (SMTP host, port, from, username, password).
// Values referring to argocd-notifications-secret (`$key`) are not resolved yet. PARTIAL: nothing
// delivers notifications yet (see docs/notifications.md).
import { parse as parseYaml } from 'yaml';
import { compileCondition, ExprError, type Condition } from './expr.js';

export interface TriggerCondition {
  when: Condition;
  send: string[];
  oncePer?: string;
  description?: string;
}

export interface NotificationTemplate {
  message: string;
  title?: string;
  /** Per webhook service: method, path and body (Go templates, rendered later). */
  webhook: Record<string, { method: string; path: string; body: string }>;
  email?: { subject: string };
}

export type NotificationService =
  | { kind: 'webhook'; name: string; url: string; headers: { name: string; value: string }[] }
  | { kind: 'slack'; name: 'slack'; url: string }
  | {
      kind: 'email';
      name: 'email';
      host: string;
      port: number;
      from: string;
      username?: string;
      password?: string;
    };

/** One entry of the `subscriptions` key: Argo CD's default subscriptions. */
export interface DefaultSubscription {
  triggers: string[];
  /** `<service>:<recipient>` entries, split. */
  destinations: { service: string; recipient: string }[];
  /** Equality-based label selector (`k=v`, `k==v`, `k!=v`, comma-separated); empty: every Application. */
  selector: { key: string; equals: boolean; value: string }[];
}

export interface NotificationsConfig {
  triggers: Map<string, TriggerCondition[]>;
  subscriptions: DefaultSubscription[];
  templates: Map<string, NotificationTemplate>;
  services: Map<string, NotificationService>;
  /** `argocd-notifications-cm: <key>: <why>` for every key that could not be read. */
  problems: string[];
}

// notifications_catalog/triggers/on-deployed.yaml, whitespace normalised.
const ON_DEPLOYED =
  "app.status.operationState != nil and app.status.operationState.phase in ['Succeeded'] and app.status.health.status == 'Healthy' and (!time.Parse(app.status.health.lastTransitionTime).Add(1 * time.Minute).Before(time.Parse(app.status.operationState.finishedAt)) or time.Parse(app.status.health.lastTransitionTime).Before(time.Parse(app.status.operationState.startedAt)))";

type Obj = Record<string, unknown>;
const get = (o: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((v, p) => (v && typeof v === 'object' ? (v as Obj)[p] : undefined), o);
const time = (v: unknown) => (typeof v === 'string' ? Date.parse(v) : NaN);

const onDeployed: Condition = {
  source: ON_DEPLOYED,
  evaluate(env) {
    const status = get(env, 'app', 'status');
    if (get(status, 'operationState', 'phase') !== 'Succeeded') return false;
    if (get(status, 'health', 'status') !== 'Healthy') return false;
    const healthy = time(get(status, 'health', 'lastTransitionTime'));
    const finished = time(get(status, 'operationState', 'finishedAt'));
    const started = time(get(status, 'operationState', 'startedAt'));
    return !(healthy + 60_000 < finished) || healthy < started;
  },
};

export function readCondition(when: string): Condition {
  return when.replace(/\s+/g, ' ').trim() === ON_DEPLOYED ? onDeployed : compileCondition(when);
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const strings = (v: unknown) => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined);

function readTrigger(value: unknown): TriggerCondition[] {
  if (!Array.isArray(value)) throw new Error('must be a list of conditions (when, send)');
  return value.map((c: unknown, i) => {
    const when = str(get(c, 'when'));
    const send = strings(get(c, 'send'));
    if (when === undefined || !send)
      throw new Error(`[${i}]: needs when (a string) and send (a list of templates)`);
    const oncePer = str(get(c, 'oncePer'));
    const description = str(get(c, 'description'));
    try {
      return {
        when: readCondition(when),
        send,
        ...(oncePer ? { oncePer } : {}),
        ...(description ? { description } : {}),
      };
    } catch (err) {
      if (err instanceof ExprError) throw new Error(`[${i}].when: ${err.message}`);
      throw err;
    }
  });
}

function readTemplate(value: unknown): NotificationTemplate {
  const message = str(get(value, 'message')) ?? '';
  const webhook: NotificationTemplate['webhook'] = {};
  for (const [name, w] of Object.entries((get(value, 'webhook') as Obj | undefined) ?? {}))
    webhook[name] = {
      method: str(get(w, 'method')) ?? 'GET',
      path: str(get(w, 'path')) ?? '',
      body: str(get(w, 'body')) ?? '',
    };
  const title = str(get(value, 'title'));
  const subject = str(get(value, 'email', 'subject'));
  return { message, webhook, ...(title ? { title } : {}), ...(subject ? { email: { subject } } : {}) };
}

function httpUrl(v: unknown, field: string): string {
  const url = str(v);
  if (!url || !/^https?:\/\//.test(url)) throw new Error(`${field}: must be an http(s) URL`);
  return url;
}

function readService(key: string, value: unknown): NotificationService {
  if (key.startsWith('service.webhook.')) {
    const headers = ((get(value, 'headers') as unknown[] | undefined) ?? []).map((h) => ({
      name: str(get(h, 'name')) ?? '',
      value: str(get(h, 'value')) ?? '',
    }));
    return {
      kind: 'webhook',
      name: key.slice('service.webhook.'.length),
      url: httpUrl(get(value, 'url'), 'url'),
      headers,
    };
  }
  if (key === 'service.slack')
    return {
      kind: 'slack',
      name: 'slack',
      url: httpUrl(get(value, 'apiURL') ?? get(value, 'url'), 'apiURL'),
    };
  const host = str(get(value, 'host'));
  const from = str(get(value, 'from'));
  const port = Number(get(value, 'port') ?? 25);
  if (!host || !from || !Number.isInteger(port)) throw new Error('needs host, port and from');
  const username = str(get(value, 'username'));
  const password = str(get(value, 'password'));
  return {
    kind: 'email',
    name: 'email',
    host,
    port,
    from,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
  };
}

function readSelector(text: string): DefaultSubscription['selector'] {
  return text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map((term) => {
      const m = /^([A-Za-z0-9._/-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)$/.exec(term);
      if (!m)
        throw new Error(
          `selector: ${JSON.stringify(term)}: only key=value, key==value and key!=value are supported`,
        );
      return { key: m[1]!, equals: m[2] !== '!=', value: m[3]! };
    });
}

function readDefaultSubscriptions(value: unknown): DefaultSubscription[] {
  if (!Array.isArray(value)) throw new Error('must be a list of { recipients, triggers, selector }');
  return value.map((v: unknown, i) => {
    const recipients = strings(get(v, 'recipients'));
    const triggers = strings(get(v, 'triggers'));
    if (!recipients || !triggers || triggers.length === 0)
      throw new Error(`[${i}]: needs recipients and triggers (lists of strings)`);
    const destinations = recipients.map((r) => {
      const colon = r.indexOf(':');
      if (colon <= 0)
        throw new Error(`[${i}].recipients: ${JSON.stringify(r)}: expected <service>:<recipient>`);
      return { service: r.slice(0, colon), recipient: r.slice(colon + 1) };
    });
    try {
      return { triggers, destinations, selector: readSelector(str(get(v, 'selector')) ?? '') };
    } catch (err) {
      throw new Error(`[${i}].${(err as Error).message}`);
    }
  });
}

/** The default subscriptions (the `subscriptions` key) whose selector matches an Application's labels. */
export function defaultSubscriptionsFor(
  config: Pick<NotificationsConfig, 'subscriptions'>,
  labels: Readonly<Record<string, string>> | undefined,
): Subscription[] {
  const out: Subscription[] = [];
  for (const s of config.subscriptions) {
    if (!s.selector.every((t) => (labels?.[t.key] === t.value) === t.equals)) continue;
    for (const trigger of s.triggers)
      for (const d of s.destinations) out.push({ trigger, service: d.service, recipients: [d.recipient] });
  }
  return out;
}

/** Reads argocd-notifications-cm's data; keys that cannot be read are problems, never ignored in silence. */
export function readNotificationsConfig(data: Readonly<Record<string, string>>): NotificationsConfig {
  const out: NotificationsConfig = {
    triggers: new Map(),
    subscriptions: [],
    templates: new Map(),
    services: new Map(),
    problems: [],
  };
  for (const key of Object.keys(data).sort()) {
    try {
      const value = parseYaml(data[key]!, { maxAliasCount: 100 }) as unknown;
      if (key.startsWith('trigger.')) out.triggers.set(key.slice('trigger.'.length), readTrigger(value));
      else if (key.startsWith('template.'))
        out.templates.set(key.slice('template.'.length), readTemplate(value));
      else if (key === 'subscriptions') out.subscriptions = readDefaultSubscriptions(value);
      else if (key.startsWith('service.webhook.') || key === 'service.slack' || key === 'service.email') {
        const s = readService(key, value);
        out.services.set(s.name, s);
      } else out.problems.push(`argocd-notifications-cm: ${key}: not supported by Capstan`);
    } catch (err) {
      out.problems.push(`argocd-notifications-cm: ${key}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return out;
}

export interface Subscription {
  trigger: string;
  service: string;
  recipients: string[];
}

const SUBSCRIBE = 'notifications.argoproj.io/subscribe.';

/** An Application's subscriptions from its annotations (`subscribe.<trigger>.<service>: a;b`). */
export function subscriptionsOf(annotations: Readonly<Record<string, string>> | undefined): Subscription[] {
  const out: Subscription[] = [];
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (!key.startsWith(SUBSCRIBE)) continue;
    const rest = key.slice(SUBSCRIBE.length);
    const dot = rest.indexOf('.');
    if (dot <= 0 || dot === rest.length - 1) continue;
    const recipients = value
      .split(';')
      .map((r) => r.trim())
      .filter(Boolean);
    out.push({ trigger: rest.slice(0, dot), service: rest.slice(dot + 1), recipients });
  }
  return out.sort((a, b) => `${a.trigger}.${a.service}`.localeCompare(`${b.trigger}.${b.service}`));
}
