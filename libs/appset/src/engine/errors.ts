import { formatIssues, type PolicyIssue } from '@capstan/policy';

/**
 * An ApplicationSet that cannot be generated: the manifest is invalid, a generator or template
 * failed (Argo's message), a bound was exceeded, or a generated Application is not valid. Every
 * issue names its field path (`spec.generators[0].matrix.generators`, or
 * `applications["guestbook"].spec.destination` for a generated Application).
 */
export class AppSetError extends Error {
  override readonly name = 'AppSetError';
  constructor(
    readonly reason: AppSetErrorReason,
    readonly issues: readonly PolicyIssue[],
    options?: { cause?: unknown },
  ) {
    super(formatIssues(issues), options);
  }
}

/** Mirrors Argo's ApplicationSet condition reasons where one exists. */
export type AppSetErrorReason =
  | 'InvalidManifest'
  | 'ApplicationParamsGenerationError'
  | 'RenderTemplateParamsError'
  | 'ApplicationValidationError'
  | 'LimitExceeded'
  | 'ProviderMissing';
