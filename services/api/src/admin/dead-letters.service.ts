// `capstan admin dlq list/replay`: the dead letters of every service's consumers (RBAC resource
// "deadletters", admins only; every decision is recorded in audit.access_decisions by the
// authorizer). Listing reads each owner's `dead_letters` through @capstan/events (the library's
// table, never a service's own tables); a replay is a command to the owning service, appended with
// the operator as actor in the api's outbox, so the request is on record even if the bus is down.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  appendToStream,
  deadLetterOwners,
  deadLetterReplay,
  listDeadLetters,
  newEvent,
  parseDeadLetterId,
  type DeadLetterView,
} from '@capstan/events';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import { actorOf } from '../auth/principal.js';
import { invalid } from '../support/validation.js';
import { API_SCHEMA } from '../migrations/index.js';

export interface DeadLetterListInput {
  service: string;
  consumer: string;
  limit: number;
  pageToken: string;
}

const iso = (d: Date | null) => (d ? d.toISOString() : '');

function view(d: DeadLetterView) {
  return {
    id: `${d.service}:${d.id}`,
    service: d.service,
    consumer: d.consumer,
    subject: d.subject,
    streamSequence: d.streamSequence,
    deliveries: d.deliveries,
    reason: d.reason,
    payload: d.payload,
    recordedAt: iso(d.recordedAt),
    replayedAt: iso(d.replayedAt),
    replayedBy: d.replayedBy ?? '',
    replayOutcome: d.replayOutcome ?? '',
    replays: d.replays,
  };
}

export class DeadLettersService {
  constructor(private readonly deps: { db: Kysely<unknown>; authz: Authorizer }) {}

  async list(ctx: RequestContext, q: DeadLetterListInput) {
    await this.deps.authz.check(ctx.principal, 'deadletters', 'get', q.service || '*', ctx.via);
    if (q.service && !(deadLetterOwners as readonly string[]).includes(q.service))
      throw invalid('service', `must be one of ${deadLetterOwners.join(', ')}`);
    if (q.consumer.length > 128) throw invalid('consumer', 'must be at most 128 characters');
    if (q.limit < 0) throw invalid('limit', 'must not be negative');
    const limit = Math.min(q.limit || 100, 1000);
    let before: Date | undefined;
    if (q.pageToken) {
      before = new Date(q.pageToken);
      if (Number.isNaN(before.getTime())) throw invalid('pageToken', 'is not a token this api issued');
    }
    const rows = await listDeadLetters(this.deps.db, {
      service: (q.service || undefined) as (typeof deadLetterOwners)[number] | undefined,
      consumer: q.consumer || undefined,
      before,
      limit,
    });
    const items = rows.map(view);
    return { items, nextPageToken: rows.length === limit ? rows.at(-1)!.recordedAt.toISOString() : '' };
  }

  async replay(ctx: RequestContext, id: string): Promise<{ requested: boolean }> {
    const parsed = parseDeadLetterId(id);
    // The decision is on record with the id as given, before it is even parsed.
    await this.deps.authz.check(ctx.principal, 'deadletters', 'replay', id || '*', ctx.via);
    if (!parsed)
      throw invalid('id', `must be <service>:<number>, the service one of ${deadLetterOwners.join(', ')}`);
    const actor = actorOf(ctx.principal);
    const command = newEvent(deadLetterReplay.type, parsed, {
      subject: `dead-letters/${parsed.service}/${parsed.id}`,
      actor,
      source: 'capstan/api',
      ...(ctx.correlationId ? { correlationId: ctx.correlationId } : {}),
    });
    await this.deps.db.transaction().execute((trx) =>
      appendToStream(trx as unknown as Parameters<typeof appendToStream>[0], {
        schema: API_SCHEMA,
        streamId: `dead-letter-replays/${randomUUID()}`,
        expectedVersion: 0,
        events: [command],
      }),
    );
    return { requested: true };
  }
}
