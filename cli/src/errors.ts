// What the user sees when a command fails: one line on stderr (plus one per invalid field), and a
// non-zero exit status. gRPC errors keep the server's message; nothing else of them is shown.
import { status, type ServiceError } from '@grpc/grpc-js';
import { fieldViolationsOf } from '@capstan/proto';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

const HINTS: Partial<Record<number, string>> = {
  [status.UNAUTHENTICATED]: ' (run capstan login)',
  [status.UNAVAILABLE]: ' (is the api running? check --server)',
};

export function describeError(err: unknown): { message: string; exitCode: number } {
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode };
  const e = err as Partial<ServiceError>;
  if (typeof e.code === 'number' && e.details !== undefined) {
    const lines = [`${status[e.code] ?? e.code}: ${e.details}${HINTS[e.code] ?? ''}`];
    for (const v of fieldViolationsOf(e as ServiceError)) lines.push(`  ${v.field}: ${v.description}`);
    return { message: lines.join('\n'), exitCode: e.code === status.INVALID_ARGUMENT ? 2 : 1 };
  }
  return { message: err instanceof Error ? err.message : String(err), exitCode: 1 };
}

/** A failure about one input (`sets.yaml (document 2)`), with the message and exit status describeError gives. */
export function inContext(context: string, err: unknown): CliError {
  const { message, exitCode } = describeError(err);
  return new CliError(`${context}: ${message}`, exitCode);
}
