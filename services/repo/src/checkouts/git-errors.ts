// What a failed git command means for the caller. Messages name the repository (URL without
// any userinfo) and revision; git's own stderr is kept only after scrubbing, and never holds a
// credential because credentials never reach git's argv, URL or output in the first place.
import { CapstanError } from '@capstan/service';

export class RepositoryAuthError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('PERMISSION_DENIED', message, options);
  }
}

/** An SSH server whose host key is not in the configured known_hosts (never trusted blindly). */
export class HostKeyUnknownError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('FAILED_PRECONDITION', message, options);
  }
}

/** A repository host in a network the repo service may not reach (see egress.ts). */
export class EgressDeniedError extends CapstanError {
  constructor(message: string) {
    super('PERMISSION_DENIED', message);
  }
}

export class RepositoryUnavailableError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNAVAILABLE', message, { ...options, retryable: true });
  }
}

export class RevisionNotFoundError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('NOT_FOUND', message, options);
  }
}

export class RepositoryTooLargeError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RESOURCE_EXHAUSTED', message, options);
  }
}

export class GitTimeoutError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('DEADLINE_EXCEEDED', message, { ...options, retryable: true });
  }
}

export class GitFailedError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INTERNAL', message, options);
  }
}

/** Maps git's stderr of a network operation to the error the caller should see. */
export function classifyGitFailure(stderr: string, what: string): CapstanError {
  const detail = firstMeaningfulLine(stderr);
  if (/Host key verification failed|host key is known/i.test(stderr)) {
    return new HostKeyUnknownError(
      `the SSH host key of ${what} is not trusted: add it to ssh.known-hosts-file`,
    );
  }
  const auth = [
    'Authentication failed',
    'could not read Username',
    'could not read Password',
    'terminal prompts disabled',
    'returned error: 40[13]',
    'Permission denied \\(publickey',
    'Permission to .* denied',
  ];
  if (new RegExp(auth.join('|'), 'i').test(stderr))
    return new RepositoryAuthError(`authentication to ${what} failed`);
  if (/not found|returned error: 404|does not appear to be a git repository/i.test(stderr)) {
    return new RevisionNotFoundError(`${what} not found`);
  }
  if (
    /Could not resolve host|Connection refused|Failed to connect|Connection timed out|Network is unreachable|returned error: 5\d\d|Could not read from remote/i.test(
      stderr,
    )
  ) {
    return new RepositoryUnavailableError(`${what} is unreachable: ${detail}`);
  }
  return new GitFailedError(`git failed for ${what}: ${detail}`);
}

function firstMeaningfulLine(stderr: string): string {
  const line = stderr
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('fatal:') || l.startsWith('error:'));
  return (line ?? stderr.trim().split('\n')[0] ?? '').slice(0, 300);
}
