// Errors across a gRPC edge, both ways, for every server and client of the project:
// - leaving a server (toServiceError): the code from @capstan/service's one mapping, the public
//   message (internal errors are logged and not described), field violations in a trailer;
// - coming back from a peer (peerError, fromPeer): its code and message are kept (Capstan services
//   never put a secret in them), field violations keep their paths; anything else (a connection
//   failure, an internal error) becomes "the <service> service is unavailable".
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import {
  CapstanError,
  UnavailableError,
  ValidationError,
  grpcStatusFor,
  publicMessageOf,
  type ErrorCode,
  type Logger,
} from '@capstan/service';
import { fieldViolationsMetadata, fieldViolationsOf } from '@capstan/proto';

/** The gRPC status a failed call answers with; unexpected and internal errors are logged here. */
export function toServiceError(err: unknown, logger: Logger, method?: string): Partial<ServiceError> {
  if (!(err instanceof CapstanError) || err.code === 'INTERNAL')
    logger.error(method ? { err, method } : { err }, 'call failed');
  const metadata =
    err instanceof ValidationError
      ? fieldViolationsMetadata(err.violations.map((v) => ({ field: v.field, description: v.description })))
      : new Metadata();
  return { code: grpcStatusFor(err), details: publicMessageOf(err), metadata };
}

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
