import { CapstanError } from '@capstan/service';

/**
 * The caller sent a resourceVersion that is no longer current. Unlike ConcurrencyError (a lost race
 * inside one command, retried automatically) retrying the same request cannot succeed: the caller
 * must reload.
 */
export class VersionMismatchError extends CapstanError {
  constructor(kind: string, name: string, current: number, expected: number) {
    super(
      'ABORTED',
      `${kind} ${name} is at resourceVersion ${current}, not ${expected}: reload it and retry`,
    );
  }
}
