// The git providers the webhook understands, told apart by their headers in Argo CD's order
// (util/webhook/scm.go: Gogs before GitHub, since Gogs and Gitea also send GitHub's headers), each
// verified with its shared secret as go-playground/webhooks (which Argo CD uses) does, compared in
// constant time, and its push payload read as Argo CD's affectedRevisionInfo reads it. Pure.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { parseRevision, type Push } from './matching.js';

export const PROVIDERS = ['gogs', 'github', 'gitlab', 'bitbucket', 'bitbucketserver'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The argocd-secret key (and api setting) holding each provider's secret. */
export const SECRET_KEY: Record<Provider, string> = {
  github: 'webhook.github.secret',
  gitlab: 'webhook.gitlab.secret',
  bitbucket: 'webhook.bitbucket.uuid',
  bitbucketserver: 'webhook.bitbucketserver.secret',
  gogs: 'webhook.gogs.secret',
};

export type Headers = Readonly<Record<string, string | string[] | undefined>>;

const header = (h: Headers, name: string): string => {
  const v = h[name.toLowerCase()];
  return (Array.isArray(v) ? v[0] : v) ?? '';
};

const EVENT_HEADER: Record<Provider, string> = {
  gogs: 'x-gogs-event',
  github: 'x-github-event',
  gitlab: 'x-gitlab-event',
  bitbucket: 'x-hook-uuid',
  bitbucketserver: 'x-event-key',
};

/** The provider and its event name; undefined: "Unknown webhook event" (Azure DevOps included). */
export function detectProvider(h: Headers): { provider: Provider; event: string } | undefined {
  for (const provider of PROVIDERS) {
    const value = header(h, EVENT_HEADER[provider]);
    if (!value) continue;
    // GitHub's package events are Argo CD's GHCR parser's (not supported here).
    if (provider === 'github' && value === 'package') continue;
    const event = provider === 'bitbucket' ? header(h, 'x-event-key') : value;
    return { provider, event: event.slice(0, 100) };
  }
  return undefined;
}

/** Equal in constant time (digests first, so lengths do not leak either). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

const hmacHex = (alg: 'sha1' | 'sha256', secret: string, body: Buffer) =>
  createHmac(alg, secret).update(body).digest('hex');

/** Checks the delivery's signature or token; a reason (never a secret or a signature) when it fails. */
export function verifySignature(
  provider: Provider,
  h: Headers,
  body: Buffer,
  secret: string,
): string | undefined {
  switch (provider) {
    case 'github': {
      const s256 = header(h, 'x-hub-signature-256');
      if (s256)
        return sameSecret(s256, `sha256=${hmacHex('sha256', secret, body)}`)
          ? undefined
          : 'HMAC verification failed';
      const s1 = header(h, 'x-hub-signature');
      if (!s1) return 'missing X-Hub-Signature-256 header';
      return sameSecret(s1, `sha1=${hmacHex('sha1', secret, body)}`) ? undefined : 'HMAC verification failed';
    }
    case 'bitbucketserver': {
      const sig = header(h, 'x-hub-signature');
      if (!sig) return 'missing X-Hub-Signature header';
      return sameSecret(sig, `sha256=${hmacHex('sha256', secret, body)}`)
        ? undefined
        : 'HMAC verification failed';
    }
    case 'gogs': {
      // Gitea sends the same value as X-Gitea-Signature too.
      const sig = header(h, 'x-gogs-signature') || header(h, 'x-gitea-signature');
      if (!sig) return 'missing X-Gogs-Signature header';
      return sameSecret(sig, hmacHex('sha256', secret, body)) ? undefined : 'HMAC verification failed';
    }
    case 'gitlab': {
      const token = header(h, 'x-gitlab-token');
      if (!token) return 'missing X-Gitlab-Token header';
      return sameSecret(token, secret) ? undefined : 'token verification failed';
    }
    case 'bitbucket':
      return sameSecret(header(h, 'x-hook-uuid'), secret) ? undefined : 'UUID verification failed';
  }
}

export interface PushDelivery extends Push {
  /** The full ref as the provider gave it (refs/heads/main), when it gave one. */
  ref: string;
  before?: string;
  after?: string;
}

export type Parsed =
  | { kind: 'push'; push: PushDelivery }
  | { kind: 'ignored'; reason: string }
  | { kind: 'unhandled'; reason: string };

/** The events each provider's push (and ping) arrives as; others are refused as Argo CD does. */
const PUSH_EVENTS: Record<Provider, readonly string[]> = {
  github: ['push'],
  gitlab: ['Push Hook', 'Tag Push Hook', 'System Hook'],
  bitbucket: ['repo:push'],
  bitbucketserver: ['repo:refs_changed'],
  gogs: ['push'],
};
const PING_EVENTS: Record<Provider, readonly string[]> = {
  github: ['ping'],
  gitlab: [],
  bitbucket: [],
  bitbucketserver: ['diagnostics:ping'],
  gogs: [],
};

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown, max = 2048): string => (typeof v === 'string' && v.length <= max ? v : '');
const sha = (v: unknown): string | undefined => {
  const s = str(v, 64).toLowerCase();
  return /^[0-9a-f]{40}$/.test(s) && !/^0{40}$/.test(s) ? s : undefined;
};

function bodyJson(provider: Provider, h: Headers, body: Buffer): unknown {
  let text = body.toString('utf8');
  // GitHub may send application/x-www-form-urlencoded with the JSON in `payload`.
  if (provider === 'github' && header(h, 'content-type').startsWith('application/x-www-form-urlencoded'))
    text = new URLSearchParams(text).get('payload') ?? '';
  return JSON.parse(text) as unknown;
}

/** Reads a verified delivery: a push, a ping (ignored), or an event Capstan does not handle. */
export function parseDelivery(provider: Provider, event: string, h: Headers, body: Buffer): Parsed {
  if (PING_EVENTS[provider].includes(event)) return { kind: 'ignored', reason: `${event} event` };
  if (!PUSH_EVENTS[provider].includes(event))
    return { kind: 'unhandled', reason: `event ${JSON.stringify(event)} is not handled` };
  let payload: Json;
  try {
    payload = obj(bodyJson(provider, h, body));
  } catch {
    return { kind: 'unhandled', reason: 'payload is not valid JSON' };
  }
  const push = readPush(provider, payload);
  if (!push || push.webURLs.length === 0)
    return { kind: 'ignored', reason: 'no repository URL in the payload' };
  return { kind: 'push', push };
}

function readPush(provider: Provider, p: Json): PushDelivery | undefined {
  switch (provider) {
    case 'github':
    case 'gogs':
    case 'gitlab': {
      // GitLab: project.web_url and project.default_branch; GitHub and Gogs/Gitea: repository.*.
      const repo = obj(provider === 'gitlab' ? p.project : p.repository);
      if (provider === 'gitlab' && !['push', 'tag_push'].includes(str(p.object_kind) || 'push'))
        return undefined;
      const ref = str(p.ref, 1024);
      const revision = parseRevision(ref);
      const after = sha(p.after);
      const before = sha(p.before);
      return {
        webURLs: [str(provider === 'gitlab' ? repo.web_url : repo.html_url)].filter(Boolean),
        ref,
        revision,
        touchedHead: str(repo.default_branch, 255) === revision,
        ...(after ? { after } : {}),
        ...(before ? { before } : {}),
      };
    }
    case 'bitbucket': {
      const change = obj((obj(p.push).changes as unknown[] | undefined)?.[0]);
      const next = obj(change.new);
      const after = sha(obj(next.target).hash);
      const before = sha(obj(obj(change.old).target).hash);
      const name = str(next.name, 1024);
      return {
        webURLs: [str(obj(obj(obj(p.repository).links).html).href)].filter(Boolean),
        ref: name,
        revision: name,
        // Not in the payload: Argo CD assumes it was, and lets the re-check decide.
        touchedHead: true,
        ...(after ? { after } : {}),
        ...(before ? { before } : {}),
      };
    }
    case 'bitbucketserver': {
      const clone = obj(obj(p.repository).links).clone;
      const webURLs = (Array.isArray(clone) ? clone : [])
        .map(obj)
        .filter((l) => l.name === 'http' || l.name === 'ssh')
        .map((l) => str(l.href))
        .filter(Boolean);
      const change = obj((p.changes as unknown[] | undefined)?.[0]);
      const ref = str(obj(change.ref).id, 1024);
      const after = sha(change.toHash);
      const before = sha(change.fromHash);
      return {
        webURLs,
        ref,
        revision: parseRevision(ref),
        touchedHead: true,
        ...(after ? { after } : {}),
        ...(before ? { before } : {}),
      };
    }
  }
}
