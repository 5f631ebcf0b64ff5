// Argo CD's per-source sync revisions of a multi-source Application (`argocd app sync NAME
// --revisions R1 --source-positions 1`; ApplicationSyncRequest.revisions and sourcePositions;
// server/application/application.go resolveSourceRevisions). Positions count from 1 in spec.sources
// order; a source without one syncs at its targetRevision. The request becomes one revision per
// source, which the sync service resolves (and records per source in status.history).
//
// Where Argo ignores what does not apply, Capstan refuses it, so a request never means less than it
// says: a single revision on a multi-source Application, per-source revisions on a single-source one.
import { applicationSources, hasMultipleSources, type Application } from '@capstan/policy';
import { FailedPreconditionError, ValidationError, type FieldViolation } from '@capstan/service';
import { automatedSyncEnabled } from './rollback.js';

export interface SourceRevisionRequest {
  revision: string;
  revisions: readonly string[];
  sourcePositions: readonly number[];
  dryRun: boolean;
}

/** The checks Argo CD's CLI makes before it sends the request, with its messages (the api's edge). */
export function sourcePositionViolations(
  revisions: readonly string[],
  positions: readonly number[],
): FieldViolation[] {
  if (revisions.length !== positions.length)
    return [
      {
        field: 'sourcePositions',
        description:
          'While using --revisions and --source-positions, length of values for both flags should be same.',
      },
    ];
  return positions.flatMap((p, i) =>
    p <= 0
      ? [
          {
            field: `sourcePositions[${i}]`,
            description: 'source-position cannot be less than or equal to 0, Counting starts at 1',
          },
        ]
      : [],
  );
}

/** A multi-source Application's source's target: Argo's FirstNonEmpty(targetRevision, "HEAD"), a chart's version. */
function targetOf(src: { targetRevision?: string | undefined; chart?: string | undefined }): string {
  return src.targetRevision || (src.chart ? '' : 'HEAD');
}

/**
 * The revision per source (spec.sources order) a sync request pins, or undefined when it pins none.
 * Throws Argo CD's refusals: a position out of range, a revision other than the target while
 * automated sync is on (unless a dry run).
 */
export function pinnedSourceRevisions(app: Application, req: SourceRevisionRequest): string[] | undefined {
  const multiSource = hasMultipleSources(app);
  const perSource = req.revisions.length > 0 || req.sourcePositions.length > 0;
  if (!multiSource) {
    if (perSource)
      throw new ValidationError([
        {
          field: 'revisions',
          description:
            'revisions with sourcePositions are for a multi-source Application (spec.sources); this one has spec.source: use revision',
        },
      ]);
    return undefined;
  }
  if (!perSource) {
    // Never silently ignored: one revision cannot say which source it is for.
    if (req.revision)
      throw new ValidationError([
        {
          field: 'revision',
          description:
            'a single revision is not supported on a multi-source Application: name the source, as Argo CD does (revisions with sourcePositions; argocd app sync NAME --revisions R --source-positions 1)',
        },
      ]);
    return undefined;
  }
  const violations = sourcePositionViolations(req.revisions, req.sourcePositions);
  if (req.revision)
    violations.push({ field: 'revision', description: 'revision and revisions are both set: set one' });
  if (violations.length > 0) throw new ValidationError(violations);
  const sources = applicationSources(app);
  const pinned = sources.map(targetOf);
  req.sourcePositions.forEach((pos, i) => {
    if (pos > sources.length)
      throw new ValidationError([
        { field: `sourcePositions[${i}]`, description: 'source position is out of range' },
      ]);
    // An empty revision keeps the source's target, as Argo's.
    pinned[pos - 1] = req.revisions[i] || pinned[pos - 1]!;
  });
  if (automatedSyncEnabled(app) && !req.dryRun)
    for (const [i, src] of sources.entries())
      if (pinned[i] !== targetOf(src))
        throw new FailedPreconditionError(
          `Cannot sync source ${src.repoURL} to ${pinned[i]}: auto-sync currently set to ${src.targetRevision ?? ''}`,
        );
  return pinned;
}
