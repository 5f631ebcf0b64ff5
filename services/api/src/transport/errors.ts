// The one place where errors become transport statuses (like Argo CD's error interceptor): domain
// errors keep their code and message; anything else is logged and reported as "internal error",
// so no stack, SQL or secret ever reaches a caller.
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import {
  CapstanError,
  ValidationError,
  errorCodeOf,
  grpcStatusFor,
  httpStatusFor,
  publicMessageOf,
  type Logger,
} from '@capstan/service';
import { fieldViolationsMetadata } from '@capstan/proto';

export function toGrpcError(err: unknown, logger: Logger): Partial<ServiceError> {
  if (!(err instanceof CapstanError)) {
    logger.error({ err }, 'unexpected error');
    return { code: status.INTERNAL, details: 'internal error', metadata: new Metadata() };
  }
  const metadata =
    err instanceof ValidationError ? fieldViolationsMetadata([...err.violations]) : new Metadata();
  return { code: grpcStatusFor(err), details: publicMessageOf(err), metadata };
}

export interface HttpErrorBody {
  code: string;
  message: string;
  details?: { field: string; description: string }[];
}

export function toHttpError(err: unknown, logger: Logger): { status: number; body: HttpErrorBody } {
  if (!(err instanceof CapstanError)) {
    logger.error({ err }, 'unexpected error');
    return { status: 500, body: { code: 'INTERNAL', message: 'internal error' } };
  }
  return {
    status: httpStatusFor(err),
    body: {
      code: errorCodeOf(err),
      message: publicMessageOf(err),
      ...(err instanceof ValidationError ? { details: [...err.violations] } : {}),
    },
  };
}
