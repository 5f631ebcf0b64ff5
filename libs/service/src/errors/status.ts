// The one place where Capstan error codes become transport status codes.
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

/** The message safe to show a caller: internal errors are not described beyond their existence. */
export function publicMessageOf(err: unknown): string {
  return err instanceof CapstanError ? err.message : 'internal error';
}
