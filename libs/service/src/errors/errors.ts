// The one error hierarchy of every package. `code` is a gRPC-style status name; the mappings to gRPC
// status, HTTP status and what a bus consumer does with the message live in status.ts, one table
// each. Messages are lowercase, name what failed and never hold a secret; the underlying error
// travels as `cause`.

export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'FAILED_PRECONDITION'
  | 'ABORTED'
  | 'PERMISSION_DENIED'
  | 'UNAUTHENTICATED'
  | 'RESOURCE_EXHAUSTED'
  | 'UNAVAILABLE'
  | 'DEADLINE_EXCEEDED'
  | 'INTERNAL';

export interface FieldViolation {
  /** JSON path of the offending field, e.g. `spec.destinationServiceAccounts[2].namespace`. */
  field: string;
  description: string;
}

/**
 * The codes whose failures may pass when the same thing is tried again later (a dependency down or
 * slow, a concurrent writer, an unexpected fault); the others are answers that a retry repeats.
 */
const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'UNAVAILABLE',
  'DEADLINE_EXCEEDED',
  'ABORTED',
  'INTERNAL',
]);

export class CapstanError extends Error {
  readonly code: ErrorCode;
  /** Whether trying the same thing again later may succeed; by default, what the code says. */
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options?.retryable ?? RETRYABLE_CODES.has(code);
  }
}

export class ValidationError extends CapstanError {
  readonly violations: readonly FieldViolation[];
  constructor(violations: readonly FieldViolation[], options?: { cause?: unknown }) {
    super('INVALID_ARGUMENT', violations.map((v) => `${v.field}: ${v.description}`).join('; '), options);
    this.violations = violations;
  }
}

export class NotFoundError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('NOT_FOUND', message, options);
  }
}

export class AlreadyExistsError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ALREADY_EXISTS', message, options);
  }
}

export class PermissionDeniedError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('PERMISSION_DENIED', message, options);
  }
}

export class UnauthenticatedError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNAUTHENTICATED', message, options);
  }
}

export class FailedPreconditionError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('FAILED_PRECONDITION', message, options);
  }
}

/** An input that can never be handled (not an event of the catalog, a message that is not JSON). */
export class InvalidArgumentError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_ARGUMENT', message, options);
  }
}

/** Another writer changed the aggregate first. Retrying the whole command (reload, decide) is safe. */
export class ConcurrencyError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ABORTED', message, { ...options, retryable: true });
  }
}

/** A dependency is down or slow; the same work may succeed later. */
export class UnavailableError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNAVAILABLE', message, { ...options, retryable: true });
  }
}
