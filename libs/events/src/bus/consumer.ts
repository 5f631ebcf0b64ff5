// Durable pull consumers with explicit ack, bounded redelivery and a dead-letter subject.
//
// Messages are handled in natural batches: whatever has arrived while the previous batch was being
// handled forms the next one (at most maxBatch). At low load a batch is one message (low latency);
// under load batches grow, so a batch handler can apply many events in one transaction (throughput).
import { AckPolicy, DeliverPolicy, headers as natsHeaders, type JsMsg } from 'nats';
import type { EventDefinition, EventOf } from '../catalog/define.js';
import type { Bus } from './bus.js';
import { decodeEvent } from './decode.js';
import { busHandlingFor } from '@capstan/service';
import { PoisonMessageError } from './errors.js';
import { deadLetterSubject, streamOfSubject } from './streams.js';

export interface DeadLetter {
  consumer: string;
  subject: string;
  streamSequence: number;
  deliveries: number;
  reason: string;
  payload: string;
}

export interface DeadLetterStore {
  record(entry: DeadLetter): Promise<void>;
}

export interface MessageContext {
  /** 1 on first delivery. */
  deliveryCount: number;
  streamSequence: number;
  subject: string;
}

/**
 * A consumer of some events of the catalog. Its handler receives the union of their types with the data
 * decoded against the catalog (`EventOf`), to switch on `event.type` with an `assertNever` default: no
 * cast, no second parse.
 */
export interface ConsumerOptions<D extends readonly EventDefinition[] = readonly EventDefinition[]> {
  /** Durable consumer name; also names the dead-letter subject and the idempotency records. */
  durable: string;
  /** The catalog's definitions of the events this consumer receives; all must live in one stream. */
  events: D;
  /** Handle one event. Either handle or handleBatch. */
  handle?: (event: EventOf<D[number]>, ctx: MessageContext) => Promise<void>;
  /** Handle a batch of valid events; thrown errors fall back to handling the batch one event at a time. */
  handleBatch?: (events: readonly EventOf<D[number]>[]) => Promise<void>;
  maxDeliver?: number;
  ackWaitMs?: number;
  maxBatch?: number;
  backoff?: { baseMs: number; maxMs: number };
  deadLetters?: DeadLetterStore;
  onError?: (err: unknown, info: { durable: string; subject: string; action: 'nak' | 'dead-letter' }) => void;
}

export interface RunningConsumer {
  readonly durable: string;
  /**
   * Hands a recorded message (a dead letter's payload) to this consumer's handler again, as if
   * delivered: decoded against the catalog, then handled. Throws what decoding or the handler
   * throws; records nothing (the caller records the outcome).
   */
  replay(payload: string, subject: string): Promise<void>;
  /** Stops fetching, finishes the batch in hand, hands queued messages back, and resolves. */
  stop(): Promise<void>;
}

/** `scheme://user:password@host` -> `scheme://***@host`, wherever it appears in a text. */
export function redactUserinfo(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]{0,31}:\/\/)[^/@\s"'\\]{0,256}:[^/@\s"'\\]{0,256}@/gi, '$1***@');
}

export function backoffDelay(deliveryCount: number, backoff: { baseMs: number; maxMs: number }): number {
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, deliveryCount - 1));
}

/** Whether a NATS subject matches a subject pattern (`*` one token, `>` the rest). */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

export function commonWildcard(subjects: readonly string[]): string {
  const split = subjects.map((s) => s.split('.'));
  const prefix: string[] = [];
  for (let i = 0; split.every((t) => i < t.length - 1 && t[i] === split[0]![i]); i++)
    prefix.push(split[0]![i]!);
  return [...prefix, '>'].join('.');
}

export async function startConsumer<const D extends readonly EventDefinition[]>(
  bus: Bus,
  options: ConsumerOptions<D>,
): Promise<RunningConsumer> {
  type Received = EventOf<D[number]>;
  if (!options.handle === !options.handleBatch)
    throw new Error('a consumer needs exactly one of handle or handleBatch');
  const maxDeliver = options.maxDeliver ?? 5;
  const maxBatch = options.maxBatch ?? 256;
  const backoff = options.backoff ?? { baseMs: 500, maxMs: 30_000 };
  const types = options.events.map((d) => d.type);
  const subjects = [...new Set(types.map((t) => bus.subjectOf(t)))];
  const streams = new Set(subjects.map((s) => streamOfSubject(bus.namespace, s)));
  if (streams.size !== 1)
    throw new Error(`consumer ${options.durable} spans streams ${[...streams].join(', ')}`);
  const stream = [...streams][0]!;
  // NATS before 2.10 has one filter subject per consumer: several types share their longest common
  // subject prefix as a wildcard filter, and events of other types under it are acked and skipped
  // (by subject, before decoding: the wildcard may carry far more than this consumer wants).
  const filterSubject = subjects.length === 1 ? subjects[0]! : commonWildcard(subjects);
  const wanted = new Set(types);
  // A type published below its source's token (`ext.*.sync.request`) has a wildcard subject.
  const exactSubjects = new Set(subjects.filter((s) => !/(^|\.)[*>](\.|$)/.test(s)));
  const subjectPatterns = subjects.filter((s) => !exactSubjects.has(s));
  const wantedSubject = (subject: string) =>
    exactSubjects.has(subject) || subjectPatterns.some((p) => subjectMatches(p, subject));

  const config = {
    durable_name: options.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    // The bound on deliveries is enforced here, not by the server: a message whose last try failed
    // must still reach the dead-letter subject, and if that publish fails too (NATS restarting), the
    // server has to deliver it once more for the dead-lettering to be retried.
    max_deliver: -1,
    ack_wait: (options.ackWaitMs ?? 30_000) * 1e6,
    filter_subject: filterSubject,
    max_ack_pending: Math.max(1000, maxBatch * 4),
  };
  try {
    await bus.jsm.consumers.info(stream, options.durable);
    await bus.jsm.consumers.update(stream, options.durable, {
      max_deliver: config.max_deliver,
      ack_wait: config.ack_wait,
      filter_subject: config.filter_subject,
      max_ack_pending: config.max_ack_pending,
    });
  } catch (err) {
    if (!/consumer not found/i.test((err as Error).message)) throw err;
    await bus.jsm.consumers.add(stream, config);
  }

  const consumer = await bus.js.consumers.get(stream, options.durable);
  const messages = await consumer.consume({ max_messages: maxBatch * 2 });
  const queue: JsMsg[] = [];
  let wake: (() => void) | undefined;
  let fetching = true;
  let stopping = false;

  const pump = (async () => {
    for await (const m of messages) {
      queue.push(m);
      wake?.();
    }
    fetching = false;
    wake?.();
  })();

  const deadLetter = async (m: JsMsg, reason: string) => {
    // What another system sent may carry a password in a URL (the very reason it is refused):
    // it is kept for inspection and replay without it.
    const payload = redactUserinfo(new TextDecoder().decode(m.data));
    const h = natsHeaders();
    h.set('Nats-Msg-Id', `${options.durable}:${m.info.stream}:${m.info.streamSequence}`);
    h.set('Capstan-Reason', reason.slice(0, 1024));
    h.set('Capstan-Original-Subject', m.subject);
    h.set('Capstan-Stream-Sequence', String(m.info.streamSequence));
    await bus.js.publish(deadLetterSubject(bus.namespace, options.durable), payload, { headers: h });
    await options.deadLetters?.record({
      consumer: options.durable,
      subject: m.subject,
      streamSequence: m.info.streamSequence,
      deliveries: m.info.deliveryCount,
      reason,
      payload,
    });
    // A bare +TERM: a server before 2.10 does not read `+TERM <reason>` as a term and would deliver the
    // message again after ack_wait; the reason is in the header and the record above.
    m.term();
  };

  // Why a message is being dead-lettered, kept while the dead-lettering itself is retried (the
  // redelivery carries no reason; another replica that gets it says only that the tries ran out).
  const pendingReasons = new Map<number, string>();
  const deadLetterOrRetry = async (m: JsMsg, reason: string) => {
    try {
      await deadLetter(m, reason);
      pendingReasons.delete(m.info.streamSequence);
    } catch (err) {
      pendingReasons.set(m.info.streamSequence, reason);
      options.onError?.(err, { durable: options.durable, subject: m.subject, action: 'nak' });
      m.nak(backoffDelay(m.info.deliveryCount, backoff));
    }
  };

  const fail = async (m: JsMsg, err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    const terminal = busHandlingFor(err) === 'dead-letter';
    if (terminal || m.info.deliveryCount >= maxDeliver) {
      options.onError?.(err, { durable: options.durable, subject: m.subject, action: 'dead-letter' });
      const reason = terminal ? message : `gave up after ${m.info.deliveryCount} deliveries: ${message}`;
      await deadLetterOrRetry(m, reason);
    } else {
      options.onError?.(err, { durable: options.durable, subject: m.subject, action: 'nak' });
      m.nak(backoffDelay(m.info.deliveryCount, backoff));
    }
  };

  const ctxOf = (m: JsMsg): MessageContext => ({
    deliveryCount: m.info.deliveryCount,
    streamSequence: m.info.streamSequence,
    subject: m.subject,
  });

  const handleOne = async (m: JsMsg, event: Received) => {
    try {
      if (options.handle) await options.handle(event, ctxOf(m));
      else await options.handleBatch!([event]);
      m.ack();
    } catch (err) {
      await fail(m, err);
    }
  };

  const processBatch = async (batch: JsMsg[]) => {
    const valid: { m: JsMsg; event: Received }[] = [];
    for (const m of batch) {
      if (m.info.deliveryCount > maxDeliver) {
        // The handler had its tries; only the dead-lettering failed before.
        await deadLetterOrRetry(
          m,
          pendingReasons.get(m.info.streamSequence) ?? `gave up after ${maxDeliver} deliveries`,
        );
        continue;
      }
      if (!wantedSubject(m.subject)) {
        m.ack();
        continue;
      }
      try {
        const event = decodeEvent(m.data, bus.catalog);
        // The one place an envelope becomes a typed event: its type is one of `events` and its data
        // passed that definition's schema in decodeEvent.
        if (wanted.has(event.type)) valid.push({ m, event: event as Received });
        else m.ack();
      } catch (err) {
        await fail(m, err instanceof PoisonMessageError ? err : new PoisonMessageError(String(err)));
      }
    }
    if (valid.length === 0) return;
    if (options.handleBatch && valid.length > 1) {
      try {
        await options.handleBatch(valid.map((v) => v.event));
        for (const v of valid) v.m.ack();
        return;
      } catch {
        // Isolate the event that fails so that it alone is retried or dead-lettered.
      }
    }
    for (const v of valid) await handleOne(v.m, v.event);
  };

  // A message fetched but not yet settled (waiting in `queue` behind a slow batch, or in the batch
  // being handled) is kept ours with +WPI: past ack_wait the server would deliver it again, to
  // this replica or another, and a poison message would be dead-lettered once per delivery.
  let inHand: readonly JsMsg[] = [];
  const keepAlive = setInterval(
    () => {
      for (const m of [...inHand, ...queue]) m.working();
    },
    Math.max(250, (options.ackWaitMs ?? 30_000) / 3),
  );
  keepAlive.unref();

  const loop = (async () => {
    while (!stopping) {
      if (queue.length === 0) {
        if (!fetching) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      const batch = queue.splice(0, maxBatch);
      inHand = batch;
      try {
        await processBatch(batch);
      } catch (err) {
        // Nothing a batch does may stop the consumer; its messages come back after ack_wait.
        options.onError?.(err, { durable: options.durable, subject: batch[0]?.subject ?? '', action: 'nak' });
      } finally {
        inHand = [];
      }
    }
  })();

  let stopped: Promise<void> | undefined;
  return {
    durable: options.durable,
    async replay(payload, subject) {
      const event = decodeEvent(new TextEncoder().encode(payload), bus.catalog);
      if (!wanted.has(event.type))
        throw new PoisonMessageError(`${event.type} is not an event consumer ${options.durable} handles`);
      const ctx: MessageContext = { deliveryCount: 1, streamSequence: 0, subject };
      if (options.handle) await options.handle(event as Received, ctx);
      else await options.handleBatch!([event as Received]);
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        await messages.close();
        wake?.();
        await loop;
        clearInterval(keepAlive);
        // Hand back what was fetched but not handled, so another replica takes it at once.
        for (const m of queue.splice(0)) m.nak();
        await pump;
      })();
      return stopped;
    },
  };
}
