// Errors leave the service as gRPC statuses: the code from the one workspace mapping, the
// public message (internal errors are not described), and field violations in a trailer.
import type { ServiceError } from '@grpc/grpc-js';
import { Metadata } from '@grpc/grpc-js';
import { fieldViolationsMetadata } from '@capstan/proto';
import { CapstanError, grpcStatusFor, publicMessageOf, ValidationError, type Logger } from '@capstan/service';

export function toServiceError(err: unknown, logger: Logger, method: string): Partial<ServiceError> {
  if (!(err instanceof CapstanError) || err.code === 'INTERNAL') logger.error({ err, method }, 'call failed');
  const metadata =
    err instanceof ValidationError
      ? fieldViolationsMetadata(err.violations.map((v) => ({ field: v.field, description: v.description })))
      : new Metadata();
  return { code: grpcStatusFor(err), details: publicMessageOf(err), metadata };
}
