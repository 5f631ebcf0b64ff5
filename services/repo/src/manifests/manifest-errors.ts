// Errors of manifest generation. Each names the repository, revision and path it concerns.
import { CapstanError } from '@capstan/service';

/** A path (or a symbolic link in the repository) points outside the repository. */
export class PathEscapeError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_ARGUMENT', message, options);
  }
}

export class PathNotFoundError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('NOT_FOUND', message, options);
  }
}

/** The repository content cannot be rendered (malformed YAML, kustomization or chart). */
export class ManifestRenderError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('FAILED_PRECONDITION', message, options);
  }
}

/** A tool the source needs (kustomize, helm) is not installed. */
export class ToolUnavailableError extends CapstanError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('FAILED_PRECONDITION', message, options);
  }
}
