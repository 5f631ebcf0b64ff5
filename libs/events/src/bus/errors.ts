// What a handler throws decides what happens to the message (nats.js style: explicit ack/nak/term).
//  - returns normally            -> ack
//  - throws RetryableError       -> nak(backoff), until max deliveries, then dead-letter
//  - throws TerminalError        -> dead-letter now and term: retrying cannot help
//  - throws anything else        -> treated as retryable (a bug or an outage should not lose the event)

export class BusError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class RetryableError extends BusError {}

export class TerminalError extends BusError {}

/** A message that cannot be an event of the catalog: not JSON, not an envelope, unknown type, bad data. */
export class PoisonMessageError extends TerminalError {}
