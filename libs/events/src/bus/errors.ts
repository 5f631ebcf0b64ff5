// What a handler throws decides what happens to the message; the decision is @capstan/service's
// busHandlingFor, the same for every consumer:
//  - returns normally                                   -> ack
//  - throws a retryable CapstanError (UnavailableError,
//    ConcurrencyError, ...) or anything not a CapstanError -> nak(backoff), until max deliveries, then dead-letter
//  - throws a CapstanError that is not retryable
//    (ValidationError, NotFoundError, ...)                -> dead-letter now and term: retrying cannot help
import { InvalidArgumentError } from '@capstan/service';

/** A message that cannot be an event of the catalog: not JSON, not an envelope, unknown type, bad data. */
export class PoisonMessageError extends InvalidArgumentError {}
