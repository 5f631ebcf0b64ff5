// How an internal service's gRPC refusal reaches the api's caller: its code and message are kept
// (the services never put a secret in them), field violations keep their paths; anything else (a
// connection failure, an internal error) becomes "<service> is unavailable". The api's one error
// mapping (transport/errors.ts) then turns the result into the caller's status.
import { status, type ServiceError } from '@grpc/grpc-js';
import { fieldViolationsOf } from '@capstan/proto';
import { CapstanError, UnavailableError, ValidationError, type ErrorCode } from '@capstan/service';

const CODES: Partial<Record<number, ErrorCode>> = {
  [status.INVALID_ARGUMENT]: 'INVALID_ARGUMENT',
  [status.NOT_FOUND]: 'NOT_FOUND',
  [status.ALREADY_EXISTS]: 'ALREADY_EXISTS',
  [status.FAILED_PRECONDITION]: 'FAILED_PRECONDITION',
  [status.ABORTED]: 'ABORTED',
  [status.PERMISSION_DENIED]: 'PERMISSION_DENIED',
  [status.RESOURCE_EXHAUSTED]: 'RESOURCE_EXHAUSTED',
  [status.DEADLINE_EXCEEDED]: 'DEADLINE_EXCEEDED',
};

/** A rejection handler for calls to `service` ("repo", "appset"): always throws a CapstanError. */
export function remoteErrors(service: string): (err: unknown) => never {
  return (err: unknown): never => {
    const e = err as ServiceError;
    const violations = fieldViolationsOf(e);
    if (violations.length > 0) throw new ValidationError(violations, { cause: err });
    const code = CODES[e.code];
    if (code)
      throw new CapstanError(code, e.details || `${service} service refused the request`, { cause: err });
    throw new UnavailableError(`the ${service} service is unavailable`, { cause: err });
  };
}
