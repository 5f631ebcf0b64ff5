// How a message a consumer did not handle is settled: nak with backoff while tries remain, else
// dead-lettered once (subject, PostgreSQL record, reason) and terminated.
import { headers as natsHeaders, type JsMsg } from 'nats';
import { isDatabaseOutage } from '@capstan/db';
import { busHandlingFor } from '@capstan/service';
import type { EventDefinition } from '../catalog/define.js';
import type { Bus } from './bus.js';
import type { ConsumerOptions } from './consumer.js';
import { deadLetterSubject } from './streams.js';

/** `scheme://user:password@host` -> `scheme://***@host`, wherever it appears in a text. */
export function redactUserinfo(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]{0,31}:\/\/)[^/@\s"'\\]{0,256}:[^/@\s"'\\]{0,256}@/gi, '$1***@');
}

/**
 * Deliveries of a message whose handler met a database outage before it is given up: with the
 * default backoff (capped at 30 s) about an hour and a half, so a database restart, failover or
 * network cut that outlasts the usual few tries loses no command (faults: postgres-crash).
 */
export const OUTAGE_MAX_DELIVER = 200;

export function backoffDelay(deliveryCount: number, backoff: { baseMs: number; maxMs: number }): number {
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, deliveryCount - 1));
}

/**
 * How a message that was not handled is settled: nak with backoff while tries remain, else (or at
 * once for a terminal error, busHandlingFor) dead-lettered once and terminated.
 */
export class Settlement {
  private readonly backoff: { baseMs: number; maxMs: number };
  // Why a message is being dead-lettered, kept while the dead-lettering itself is retried (the
  // redelivery carries no reason; another replica that gets it says only that the tries ran out).
  private readonly pendingReasons = new Map<number, string>();
  private readonly outageMaxDeliver: number;

  constructor(
    private readonly bus: Bus,
    private readonly options: ConsumerOptions<readonly EventDefinition[]>,
    private readonly maxDeliver: number,
  ) {
    this.backoff = options.backoff ?? { baseMs: 500, maxMs: 30_000 };
    this.outageMaxDeliver = options.outageMaxDeliver ?? OUTAGE_MAX_DELIVER;
  }

  async fail(m: JsMsg, err: unknown): Promise<void> {
    const { options } = this;
    const message = err instanceof Error ? err.message : String(err);
    const terminal = busHandlingFor(err) === 'dead-letter';
    // The database away is no answer about the message: it waits for the database, far longer.
    const limit =
      !terminal && isDatabaseOutage(err) ? Math.max(this.maxDeliver, this.outageMaxDeliver) : this.maxDeliver;
    if (terminal || m.info.deliveryCount >= limit) {
      options.onError?.(err, { durable: options.durable, subject: m.subject, action: 'dead-letter' });
      const reason = terminal ? message : `gave up after ${m.info.deliveryCount} deliveries: ${message}`;
      await this.deadLetterOrRetry(m, reason);
    } else {
      options.onError?.(err, { durable: options.durable, subject: m.subject, action: 'nak' });
      m.nak(backoffDelay(m.info.deliveryCount, this.backoff));
    }
  }

  /**
   * Whether a delivery is back only because its dead-lettering failed: this replica said so, or it
   * is past every limit. Past maxDeliver alone it may be a database outage still being waited out
   * (or another replica's dead-lettering): the handler gets it again, and `fail` decides anew.
   */
  awaitsDeadLetter(m: JsMsg): boolean {
    return (
      this.pendingReasons.has(m.info.streamSequence) ||
      m.info.deliveryCount > Math.max(this.maxDeliver, this.outageMaxDeliver)
    );
  }

  /** A message past its tries, back because only its dead-lettering failed. */
  retryDeadLetter(m: JsMsg): Promise<void> {
    return this.deadLetterOrRetry(
      m,
      this.pendingReasons.get(m.info.streamSequence) ?? `gave up after ${this.maxDeliver} deliveries`,
    );
  }

  private async deadLetterOrRetry(m: JsMsg, reason: string): Promise<void> {
    try {
      await this.deadLetter(m, reason);
      this.pendingReasons.delete(m.info.streamSequence);
    } catch (err) {
      this.pendingReasons.set(m.info.streamSequence, reason);
      this.options.onError?.(err, { durable: this.options.durable, subject: m.subject, action: 'nak' });
      m.nak(backoffDelay(m.info.deliveryCount, this.backoff));
    }
  }

  private async deadLetter(m: JsMsg, reason: string): Promise<void> {
    const { bus, options } = this;
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
  }
}
