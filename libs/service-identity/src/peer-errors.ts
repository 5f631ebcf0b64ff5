// How a peer service's gRPC refusal reaches the code that called it: its code and message are kept
// (Capstan services never put a secret in them), field violations keep their paths; anything else
// (a connection failure, an internal error) becomes "the <service> service is unavailable". The one
// mapping the other way (CapstanError → gRPC/HTTP status) is @capstan/service's status.ts.
import { status, type ServiceError } from '@grpc/grpc-js';
import { CapstanError, UnavailableError, ValidationError, type ErrorCode } from '@capstan/service';
import { fieldViolationsOf } from '@capstan/proto';

/** The statuses a caller is told as they are; a peer refusing our own identity is a denial. */
const RELAYED: Partial<Record<number, ErrorCode>> = {
  [status.INVALID_ARGUMENT]: 'INVALID_ARGUMENT',
  [status.NOT_FOUND]: 'NOT_FOUND',
  [status.ALREADY_EXISTS]: 'ALREADY_EXISTS',
  [status.FAILED_PRECONDITION]: 'FAILED_PRECONDITION',
  [status.ABORTED]: 'ABORTED',
  [status.PERMISSION_DENIED]: 'PERMISSION_DENIED',
  [status.UNAUTHENTICATED]: 'PERMISSION_DENIED',
  [status.RESOURCE_EXHAUSTED]: 'RESOURCE_EXHAUSTED',
  [status.DEADLINE_EXCEEDED]: 'DEADLINE_EXCEEDED',
};

/** The failure of a call to `service` ("repo", "appset", "api") as a CapstanError. */
export function peerError(err: unknown, service: string): CapstanError {
  if (err instanceof CapstanError) return err;
  const e = err as Partial<ServiceError>;
  const violations = fieldViolationsOf(e as ServiceError);
  if (violations.length > 0) return new ValidationError(violations, { cause: err });
  const code = e.code === undefined ? undefined : RELAYED[e.code];
  if (code)
    return new CapstanError(code, e.details || `the ${service} service refused the request`, { cause: err });
  return new UnavailableError(`the ${service} service is unavailable`, { cause: err });
}

/** Calls a peer and rethrows its failure as a CapstanError. */
export async function fromPeer<T>(service: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw peerError(err, service);
  }
}
