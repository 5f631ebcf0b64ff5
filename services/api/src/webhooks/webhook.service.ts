// POST /api/webhook (Argo CD's /api/webhook): a delivery from GitHub, GitLab, Bitbucket (Cloud and
// Server) or Gogs/Gitea is told apart by its headers, verified with its provider's secret, read as a
// push, matched against every Application source as Argo CD matches it (matching.ts), and announced
// as io.capstan.ext.git.push events, one per repository URL as the matched Applications write it
// (with the target revisions that may have moved) plus the payload's own URL (for ApplicationSets):
// the repo service re-checks only those sources, and their new revisions refresh and auto-sync the
// Applications. The events go through the api's outbox in the same transaction as the delivery's
// audit row; every delivery, refused ones included, is audited (never the secret or the payload).
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { Registry, type Counter } from 'prom-client';
import { appendToStream, gitPush, newEvent, type Envelope } from '@capstan/events';
import { appendAudit, type WebhookDeliveryColumns } from '@capstan/db';
import { normalizeRepoUrl, redactRepoUrl } from '@capstan/policy';
import { metricOf, type Logger } from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';
import { API_SCHEMA } from '../migrations/index.js';
import { affectedSources } from './matching.js';
import {
  detectProvider,
  parseDelivery,
  verifySignature,
  type Headers,
  type Provider,
  type PushDelivery,
} from './providers.js';
import type { WebhookConfig } from './webhook-config.js';
import { RecentKeys, RefusalSampler, TokenBuckets } from './limits.js';

export interface Delivery {
  headers: Headers;
  body: Buffer;
  peer: string;
}

/** What the HTTP route answers (Argo CD answers plain text). */
export interface Answer {
  status: number;
  message: string;
}

type AuditFields = Omit<WebhookDeliveryColumns, 'applications' | 'event_ids' | 'peer'> &
  Partial<Pick<WebhookDeliveryColumns, 'applications' | 'event_ids'>>;

const MAX_ANNOUNCED_URLS = 50;

export class WebhookService {
  private readonly perAddress: TokenBuckets;
  private readonly perRepository: TokenBuckets;
  private readonly recent = new RecentKeys(60_000);
  private readonly sampler = new RefusalSampler();
  private readonly requests: Counter<'provider' | 'outcome'>;
  private inFlight = 0;

  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      config: WebhookConfig;
      logger: Logger;
      metrics?: Registry;
    },
  ) {
    const s = deps.config.settings;
    this.perAddress = new TokenBuckets(s.ratePerAddress, s.burst);
    this.perRepository = new TokenBuckets(s.perRepositoryPerMinute / 60, s.perRepositoryPerMinute);
    this.requests = metricOf(deps.metrics ?? new Registry(), 'webhookRequests');
  }

  /** Before the body is read: the sender's rate and the deliveries in flight. Call release() after. */
  async admit(headers: Headers, peer: string): Promise<Answer | undefined> {
    const provider = detectProvider(headers);
    if (!this.perAddress.take(peer))
      return this.refuseForLoad(
        provider?.provider,
        peer,
        429,
        'Too many webhook deliveries',
        'rate limit of the sender address',
      );
    if (this.inFlight >= this.deps.config.settings.maxInFlight)
      return this.refuseForLoad(
        provider?.provider,
        peer,
        503,
        'Too many webhook deliveries in flight',
        'deliveries in flight',
      );
    this.inFlight += 1;
    return undefined;
  }

  release(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  async maxPayloadBytes(): Promise<number> {
    return (await this.deps.config.current()).maxPayloadBytes;
  }

  /** A body over the bound: refused with 413, audited. */
  async tooLarge(headers: Headers, peer: string, limit: number): Promise<Answer> {
    const mb = Math.floor(limit / 1024 / 1024);
    const d = detectProvider(headers);
    await this.record(peer, {
      provider: d?.provider ?? 'unknown',
      event: d?.event ?? '',
      ...noPush,
      outcome: 'too-large',
      http_status: 413,
      reason: `payload larger than ${mb} MB (webhook.maxPayloadSizeMB)`,
    });
    return { status: 413, message: `Webhook processing failed: payload must be valid JSON under ${mb} MB` };
  }

  async handle(delivery: Delivery): Promise<Answer> {
    const { headers, body, peer } = delivery;
    const detected = detectProvider(headers);
    if (!detected) {
      await this.record(peer, {
        provider: 'unknown',
        event: '',
        ...noPush,
        outcome: 'invalid',
        http_status: 400,
        reason: 'no provider header',
      });
      return { status: 400, message: 'Unknown webhook event' };
    }
    const { provider, event } = detected;
    const base = { provider, event, ...noPush };
    const refusal = await this.verify(provider, headers, body);
    if (refusal) {
      await this.record(peer, { ...base, outcome: 'refused', http_status: 401, reason: refusal });
      return { status: 401, message: 'Unauthorized' };
    }
    const parsed = parseDelivery(provider, event, headers, body);
    if (parsed.kind === 'unhandled') {
      await this.record(peer, { ...base, outcome: 'invalid', http_status: 400, reason: parsed.reason });
      return { status: 400, message: 'Webhook processing failed' };
    }
    if (parsed.kind === 'ignored') {
      await this.record(peer, { ...base, outcome: 'ignored', http_status: 200, reason: parsed.reason });
      return { status: 200, message: '' };
    }
    return this.push(provider, event, parsed.push, peer);
  }

  private async verify(provider: Provider, headers: Headers, body: Buffer): Promise<string | undefined> {
    const secret = (await this.deps.config.current()).secrets[provider];
    if (secret) return verifySignature(provider, headers, body, secret);
    return this.deps.config.settings.allowUnsigned
      ? undefined
      : `no ${provider} secret is configured and webhook.allow-unsigned is off`;
  }

  private async push(provider: Provider, event: string, push: PushDelivery, peer: string): Promise<Answer> {
    const repoUrl = redactRepoUrl(push.webURLs[0]!);
    const fields = {
      provider,
      event,
      repo_url: repoUrl,
      revision: push.revision.slice(0, 255),
      after_sha: push.after ?? null,
    };
    const repoKey = normalizeRepoUrl(push.webURLs[0]!);
    if (!this.perRepository.take(repoKey)) {
      const suppressed = this.sampler.sample(`repo:${repoKey}`);
      if (suppressed !== undefined)
        await this.record(peer, {
          ...fields,
          outcome: 'throttled',
          http_status: 429,
          reason: throttledReason('rate limit of the repository', suppressed),
        });
      else this.requests.inc({ provider, outcome: 'throttled' });
      return { status: 429, message: 'Too many webhook deliveries for this repository' };
    }
    if (push.after && this.recent.seenRecently(`${repoKey}|${push.ref}|${push.after}`)) {
      await this.record(peer, {
        ...fields,
        outcome: 'duplicate',
        http_status: 200,
        reason: 'the same push was announced within the last minute',
      });
      return { status: 200, message: '' };
    }
    const { applications, announcements } = await this.match(push);
    const events = announcements.map((a) =>
      newEvent(
        gitPush.type,
        {
          repoURL: a.repoURL,
          ...(push.ref ? { ref: push.ref } : {}),
          ...(push.before ? { before: push.before } : {}),
          ...(push.after ? { after: push.after } : {}),
          revisions: a.revisions,
        },
        { subject: a.repoURL, source: 'capstan/api', actor: `webhook:${provider}` },
      ),
    );
    const reason =
      applications.length > 0
        ? `refreshes ${applications.length} application(s)`
        : 'no Application reads this repository and revision';
    await this.record(
      peer,
      {
        ...fields,
        outcome: 'accepted',
        http_status: 200,
        reason,
        applications,
        event_ids: events.map((e) => e.id),
      },
      events,
    );
    return { status: 200, message: '' };
  }

  /** The Applications this push concerns, and what to announce: URL as written → its revisions. */
  private async match(push: PushDelivery) {
    const rows = await this.deps.db
      .withSchema('api')
      .selectFrom('applications')
      .select(['namespace', 'name', 'manifest'])
      .orderBy('namespace')
      .orderBy('name')
      .execute();
    const byUrl = new Map<string, { repoURL: string; revisions: Set<string> }>();
    const applications: string[] = [];
    for (const row of rows) {
      const sources = affectedSources(push, row.manifest);
      if (sources.length === 0) continue;
      applications.push(`${row.namespace}/${row.name}`);
      for (const s of sources) {
        const key = normalizeRepoUrl(s.repoURL);
        const entry = byUrl.get(key) ?? { repoURL: s.repoURL, revisions: new Set<string>() };
        entry.revisions.add(s.targetRevision);
        byUrl.set(key, entry);
      }
    }
    // The payload's own URL, for ApplicationSets whose generators read it (no source to re-check).
    for (const url of push.webURLs)
      if (!byUrl.has(normalizeRepoUrl(url)))
        byUrl.set(normalizeRepoUrl(url), { repoURL: url, revisions: new Set() });
    const announcements = [...byUrl.values()]
      .filter((a) => !/^[a-z][a-z0-9+.-]*:\/\/[^/@]*:[^/@]*@/i.test(a.repoURL) && a.repoURL.length <= 2048)
      .slice(0, MAX_ANNOUNCED_URLS)
      .map((a) => ({ repoURL: a.repoURL, revisions: [...a.revisions].slice(0, 100) }));
    return { applications: applications.sort(), announcements };
  }

  private async refuseForLoad(
    provider: Provider | undefined,
    peer: string,
    status: number,
    message: string,
    why: string,
  ): Promise<Answer> {
    const suppressed = this.sampler.sample(`${status}:${peer}`);
    const fields = {
      provider: provider ?? 'unknown',
      event: '',
      ...noPush,
      outcome: 'throttled' as const,
      http_status: status,
    };
    if (suppressed !== undefined)
      await this.record(peer, { ...fields, reason: throttledReason(why, suppressed) });
    else this.requests.inc({ provider: fields.provider, outcome: 'throttled' });
    return { status, message };
  }

  /** The audit row, and the events in the same transaction. */
  private async record(peer: string, fields: AuditFields, events: Envelope[] = []): Promise<void> {
    this.requests.inc({ provider: fields.provider, outcome: fields.outcome });
    const row: WebhookDeliveryColumns = {
      applications: [],
      event_ids: [],
      ...fields,
      peer: peer.slice(0, 255),
    };
    await this.deps.db.transaction().execute(async (trx) => {
      if (events.length > 0)
        await appendToStream(trx, {
          schema: API_SCHEMA,
          streamId: `webhook-deliveries/${randomUUID()}`,
          expectedVersion: 0,
          events,
        });
      await appendAudit(trx, 'webhook_deliveries', row);
    });
    this.deps.logger.info(
      {
        provider: row.provider,
        event: row.event,
        repoURL: row.repo_url,
        revision: row.revision,
        outcome: row.outcome,
        status: row.http_status,
        applications: row.applications.length,
      },
      'webhook delivery',
    );
  }
}

const noPush = { repo_url: null, revision: null, after_sha: null };

const throttledReason = (why: string, suppressed: number) =>
  `${why}${suppressed > 0 ? ` (${suppressed} more refused since the last audited one, not audited)` : ''}`;
