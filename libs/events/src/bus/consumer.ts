// Durable pull consumers with explicit ack, bounded redelivery and a dead-letter subject.
//
// Messages are handled in natural batches: whatever has arrived while the previous batch was being
// handled forms the next one (at most maxBatch). At low load a batch is one message (low latency);
// under load batches grow, so a batch handler can apply many events in one transaction (throughput).
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from 'nats';
import { contextOfTraceparent, inSpan, SpanKind } from '@capstan/service';
import type { EventDefinition, EventOf } from '../catalog/define.js';
import type { Bus } from './bus.js';
import { decodeEvent } from './decode.js';
import { PoisonMessageError } from './errors.js';
import { Settlement } from './settlement.js';
import { subjectFilter, type SubjectFilter } from './subject-filter.js';

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
  /** Deliveries while the handler meets a database outage (isDatabaseOutage); default OUTAGE_MAX_DELIVER. */
  outageMaxDeliver?: number;
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

export async function startConsumer<const D extends readonly EventDefinition[]>(
  bus: Bus,
  options: ConsumerOptions<D>,
): Promise<RunningConsumer> {
  if (!options.handle === !options.handleBatch)
    throw new Error('a consumer needs exactly one of handle or handleBatch');
  const o = options as unknown as ConsumerOptions<readonly EventDefinition[]>;
  const maxBatch = options.maxBatch ?? 256;
  const filter = subjectFilter(bus, options.durable, options.events);
  await ensureDurable(bus, filter, o, maxBatch);
  const consumer = await bus.js.consumers.get(filter.stream, options.durable);
  const messages = await consumer.consume({ max_messages: maxBatch * 2 });
  return new Consumer(bus, o, filter, messages, maxBatch);
}

type AnyEvent = EventOf<EventDefinition>;

/**
 * A running consumer: a pump moves fetched messages into `queue`; the loop takes what has arrived
 * (at most maxBatch) as the next batch, decodes it, hands it to the handler and settles each message.
 */
class Consumer implements RunningConsumer {
  readonly durable: string;
  private readonly queue: JsMsg[] = [];
  private wake: (() => void) | undefined;
  private fetching = true;
  private stopping = false;
  /** The batch being handled: kept ours with +WPI, like the queue. */
  private inHand: readonly JsMsg[] = [];
  private readonly settle: Settlement;
  private readonly maxDeliver: number;
  private readonly pump: Promise<void>;
  private readonly loop: Promise<void>;
  private readonly keepAlive: NodeJS.Timeout;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly options: ConsumerOptions<readonly EventDefinition[]>,
    private readonly filter: SubjectFilter,
    private readonly messages: ConsumerMessages,
    private readonly maxBatch: number,
  ) {
    this.durable = options.durable;
    this.maxDeliver = options.maxDeliver ?? 5;
    this.settle = new Settlement(bus, options, this.maxDeliver);
    this.pump = this.fill();
    // A message fetched but not yet settled (waiting in `queue` behind a slow batch, or in the batch
    // being handled) is kept ours with +WPI: past ack_wait the server would deliver it again, to
    // this replica or another, and a poison message would be dead-lettered once per delivery.
    this.keepAlive = setInterval(
      () => {
        for (const m of [...this.inHand, ...this.queue]) m.working();
      },
      Math.max(250, (options.ackWaitMs ?? 30_000) / 3),
    );
    this.keepAlive.unref();
    this.loop = this.run();
  }

  private async fill(): Promise<void> {
    for await (const m of this.messages) {
      this.queue.push(m);
      this.wake?.();
    }
    this.fetching = false;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      if (this.queue.length === 0) {
        if (!this.fetching) break;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      const batch = this.queue.splice(0, this.maxBatch);
      this.inHand = batch;
      try {
        await this.processBatch(batch);
      } catch (err) {
        // Nothing a batch does may stop the consumer; its messages come back after ack_wait.
        this.options.onError?.(err, {
          durable: this.durable,
          subject: batch[0]?.subject ?? '',
          action: 'nak',
        });
      } finally {
        this.inHand = [];
      }
    }
  }

  private async processBatch(batch: JsMsg[]): Promise<void> {
    const valid = await this.decodeBatch(batch);
    if (valid.length === 0) return;
    if (this.options.handleBatch && valid.length > 1) {
      try {
        await this.options.handleBatch(valid.map((v) => v.event));
        for (const v of valid) v.m.ack();
        return;
      } catch {
        // Isolate the event that fails so that it alone is retried or dead-lettered.
      }
    }
    for (const v of valid) await this.handleOne(v.m, v.event);
  }

  /** The batch's events this consumer handles, decoded; the rest settled (acked, dead-lettered). */
  private async decodeBatch(batch: JsMsg[]): Promise<{ m: JsMsg; event: AnyEvent }[]> {
    const valid: { m: JsMsg; event: AnyEvent }[] = [];
    for (const m of batch) {
      if (this.settle.awaitsDeadLetter(m)) {
        // The handler had its tries; only the dead-lettering failed before.
        await this.settle.retryDeadLetter(m);
        continue;
      }
      if (!this.filter.wantedSubject(m.subject)) {
        m.ack();
        continue;
      }
      try {
        const event = decodeEvent(m.data, this.bus.catalog);
        // The one place an envelope becomes a typed event: its type is one of `events` and its data
        // passed that definition's schema in decodeEvent.
        if (this.filter.wanted.has(event.type)) valid.push({ m, event: event as AnyEvent });
        else m.ack();
      } catch (err) {
        await this.settle.fail(
          m,
          err instanceof PoisonMessageError ? err : new PoisonMessageError(String(err)),
        );
      }
    }
    return valid;
  }

  private async handleOne(m: JsMsg, event: AnyEvent): Promise<void> {
    try {
      const ctx: MessageContext = {
        deliveryCount: m.info.deliveryCount,
        streamSequence: m.info.streamSequence,
        subject: m.subject,
      };
      // The consumer's work continues the publisher's trace, with the event's correlation id.
      await inSpan(
        `consume ${event.type}`,
        {
          'capstan.correlation_id': event.correlationid,
          'capstan.event.id': event.id,
          'capstan.event.type': event.type,
          'capstan.event.subject': event.subject,
          'capstan.consumer': this.durable,
        },
        async () => {
          if (this.options.handle) await this.options.handle(event, ctx);
          else await this.options.handleBatch!([event]);
        },
        { parent: contextOfTraceparent(event.traceparent), kind: SpanKind.CONSUMER },
      );
      m.ack();
    } catch (err) {
      await this.settle.fail(m, err);
    }
  }

  async replay(payload: string, subject: string): Promise<void> {
    const event = decodeEvent(new TextEncoder().encode(payload), this.bus.catalog);
    if (!this.filter.wanted.has(event.type))
      throw new PoisonMessageError(`${event.type} is not an event consumer ${this.durable} handles`);
    const ctx: MessageContext = { deliveryCount: 1, streamSequence: 0, subject };
    if (this.options.handle) await this.options.handle(event as AnyEvent, ctx);
    else await this.options.handleBatch!([event as AnyEvent]);
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      await this.messages.close();
      this.wake?.();
      await this.loop;
      clearInterval(this.keepAlive);
      // Hand back what was fetched but not handled, so another replica takes it at once.
      for (const m of this.queue.splice(0)) m.nak();
      await this.pump;
    })();
    return this.stopped;
  }
}

/** Creates the durable consumer, or brings an existing one to this configuration. */
async function ensureDurable(
  bus: Bus,
  filter: SubjectFilter,
  options: ConsumerOptions<readonly EventDefinition[]>,
  maxBatch: number,
): Promise<void> {
  const config = {
    durable_name: options.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    // The bound on deliveries is enforced here, not by the server: a message whose last try failed
    // must still reach the dead-letter subject, and if that publish fails too (NATS restarting), the
    // server has to deliver it once more for the dead-lettering to be retried.
    max_deliver: -1,
    ack_wait: (options.ackWaitMs ?? 30_000) * 1e6,
    filter_subject: filter.filterSubject,
    max_ack_pending: Math.max(1000, maxBatch * 4),
  };
  try {
    await bus.jsm.consumers.info(filter.stream, options.durable);
    await bus.jsm.consumers.update(filter.stream, options.durable, {
      max_deliver: config.max_deliver,
      ack_wait: config.ack_wait,
      filter_subject: config.filter_subject,
      max_ack_pending: config.max_ack_pending,
    });
  } catch (err) {
    if (!/consumer not found/i.test((err as Error).message)) throw err;
    await bus.jsm.consumers.add(filter.stream, config);
  }
}
