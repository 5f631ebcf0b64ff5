// A peer's gRPC status becomes the workspace error of the same code, with the peer's message (peers
// never put secrets in messages) and its field violations; transport failures are "unavailable".
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
  [status.UNAUTHENTICATED]: 'PERMISSION_DENIED',
  [status.RESOURCE_EXHAUSTED]: 'RESOURCE_EXHAUSTED',
  [status.DEADLINE_EXCEEDED]: 'DEADLINE_EXCEEDED',
};

export function remoteError(err: unknown, peer: 'api' | 'repo'): CapstanError {
  if (err instanceof CapstanError) return err;
  const e = err as Partial<ServiceError>;
  const violations = fieldViolationsOf(e as ServiceError);
  if (violations.length > 0) return new ValidationError(violations, { cause: err });
  const code = e.code === undefined ? undefined : CODES[e.code];
  if (code) return new CapstanError(code, `${peer}: ${e.details || 'refused the request'}`, { cause: err });
  return new UnavailableError(`the ${peer} service is unavailable`, { cause: err });
}

/** Calls a peer and rethrows its failure as a workspace error. */
export async function fromPeer<T>(peer: 'api' | 'repo', call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw remoteError(err, peer);
  }
}
