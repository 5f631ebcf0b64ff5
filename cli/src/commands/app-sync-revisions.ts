// `capstan app sync NAME --revisions R --source-positions N`, as `argocd app sync`: per-source
// revisions of a multi-source Application. --revisions repeats (each value whole, as Argo's
// stringArray); --source-positions repeats or takes a comma-separated list (Argo's int64Slice).
// Argo CD's CLI checks the pair before it sends anything; so does this, with its messages (the api
// checks them again, and that a position names a source).
import { CliError } from '../errors.js';

export function sourceRevisionFlags(
  revisions: readonly string[],
  positionFlags: readonly string[],
): { revisions: string[]; sourcePositions: number[] } {
  const sourcePositions = positionFlags.flatMap((v) =>
    v.split(',').map((p) => {
      if (!/^[+-]?\d+$/.test(p.trim()))
        throw new CliError(`invalid argument "${v}" for "--source-positions" flag: not an integer`, 2);
      return Number(p.trim());
    }),
  );
  if (revisions.length !== sourcePositions.length)
    throw new CliError(
      'While using --revisions and --source-positions, length of values for both flags should be same.',
    );
  if (sourcePositions.some((p) => p <= 0))
    throw new CliError('source-position cannot be less than or equal to 0, Counting starts at 1');
  return { revisions: [...revisions], sourcePositions };
}
