// The one place where Capstan errors become what each transport does with them: a gRPC status, an
// HTTP status, and a bus consumer's handling of the message.
import { CapstanError, type ErrorCode } from './errors.js';

// Numeric values are grpc.status from @grpc/grpc-js; duplicated as numbers so that libraries
// without a gRPC dependency can map errors too.
const grpcCodes: Record<ErrorCode, number> = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
};

const httpCodes: Record<ErrorCode, number> = {
  INVALID_ARGUMENT: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  ABORTED: 409,
  FAILED_PRECONDITION: 412,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

export function errorCodeOf(err: unknown): ErrorCode {
  return err instanceof CapstanError ? err.code : 'INTERNAL';
}

export function grpcStatusFor(err: unknown): number {
  return grpcCodes[errorCodeOf(err)];
}

export function httpStatusFor(err: unknown): number {
  return httpCodes[errorCodeOf(err)];
}

/**
 * What a bus consumer does with a message whose handler threw `err`: `retry` (nak with a backoff
 * delay, until the deliveries run out, then dead-letter) or `dead-letter` now (recorded once and
 * termed: retrying cannot help). Errors that are not CapstanErrors (a bug, a driver's outage) are
 * retried, so that no event is lost to them; a CapstanError is retried only when `retryable`.
 */
export type BusHandling = 'retry' | 'dead-letter';

export function busHandlingFor(err: unknown): BusHandling {
  if (!(err instanceof CapstanError)) return 'retry';
  return err.retryable ? 'retry' : 'dead-letter';
}

/** The message safe to show a caller: internal errors are not described beyond their existence. */
export function publicMessageOf(err: unknown): string {
  return err instanceof CapstanError ? err.message : 'internal error';
}
