// Where errors become HTTP statuses (like Argo CD's error interceptor): domain errors keep their code
// and message; anything else is logged and reported as "internal error", so no stack, SQL or secret
// ever reaches a caller. gRPC uses the same mapping through toServiceError of
// @capstan/service-identity, shared by every Capstan gRPC server.
import {
  CapstanError,
  ValidationError,
  errorCodeOf,
  httpStatusFor,
  publicMessageOf,
  type Logger,
} from '@capstan/service';

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
