import { describe, expect, it } from 'vitest';
import {
  CapstanError,
  ConcurrencyError,
  NotFoundError,
  PermissionDeniedError,
  UnavailableError,
  ValidationError,
} from './errors.js';
import { busHandlingFor, grpcStatusFor, httpStatusFor } from './status.js';

describe('one mapping of an error to each transport', () => {
  it('maps a validation error to INVALID_ARGUMENT, 400 and a dead letter', () => {
    const err = new ValidationError([{ field: 'spec.project', description: 'required' }]);
    expect([grpcStatusFor(err), httpStatusFor(err), busHandlingFor(err)]).toEqual([3, 400, 'dead-letter']);
  });

  it('retries on the bus what may pass later, and dead-letters the answers a retry repeats', () => {
    expect(busHandlingFor(new UnavailableError('cluster down'))).toBe('retry');
    expect(busHandlingFor(new ConcurrencyError('changed'))).toBe('retry');
    expect(busHandlingFor(new CapstanError('DEADLINE_EXCEEDED', 'slow'))).toBe('retry');
    expect(busHandlingFor(new CapstanError('INTERNAL', 'bug'))).toBe('retry');
    expect(busHandlingFor(new Error('driver lost its connection'))).toBe('retry');
    expect(busHandlingFor(new NotFoundError('no such project'))).toBe('dead-letter');
    expect(busHandlingFor(new PermissionDeniedError('denied'))).toBe('dead-letter');
    expect(busHandlingFor(new CapstanError('UNAVAILABLE', 'given up', { retryable: false }))).toBe(
      'dead-letter',
    );
  });

  it('answers internal for what is not a CapstanError', () => {
    expect([grpcStatusFor(new Error('x')), httpStatusFor('x')]).toEqual([13, 500]);
  });
});
