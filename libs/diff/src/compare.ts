// compareResource: is a live object what git declares? Argo CD's comparison, as a structured merge
// (see predict.ts) of the normalised desired object onto the normalised live one.
import { compareOptionsOf } from './compare-options.js';
import { applyIgnores, type IgnoreRules } from './ignore.js';
import { fieldSetOf } from './managed-fields.js';
import { hideSecretData } from './mask.js';
import { dropUndeclared, normalizeObject } from './normalize.js';
import { predictLive } from './predict.js';
import type { KubeObjectLike } from './types.js';

export interface CompareOptions {
  ignore?: IgnoreRules;
  /** Capstan's server-side apply field manager: fields it owns but git no longer declares are drift. */
  fieldManager: string;
}

export interface ResourceComparison {
  status: 'Synced' | 'OutOfSync';
  /** JSON pointers (RFC 6901) that differ (after normalisation and ignores), for messages; never values. */
  differences: string[];
  /** compare-options IgnoreExtraneous on a live object git does not declare. */
  ignoreExtraneous: boolean;
  /** What a diff shows: both sides normalised the same way (Secrets' values masked). */
  normalizedTarget: KubeObjectLike | undefined;
  normalizedLive: KubeObjectLike | undefined;
  /** Live as it would be after applying git's object (Argo's predictedLiveState), Secrets masked. */
  predictedLive: KubeObjectLike | undefined;
}

export function compareResource(
  desired: KubeObjectLike | undefined,
  live: KubeObjectLike | undefined,
  options: CompareOptions,
): ResourceComparison {
  const compareOptions = compareOptionsOf(desired, live);
  let target = normalizeObject(desired);
  let current = normalizeObject(live);
  const identity = desired ?? live;
  if (identity) {
    if (target) target = applyIgnores(target, options.ignore, identity, live);
    if (current) current = applyIgnores(current, options.ignore, identity, live);
  }
  if (!target || !current) {
    const [normalizedTarget, normalizedLive] = hideSecretData(target, current);
    const differences = target || current ? [''] : [];
    return {
      status: differences.length > 0 ? 'OutOfSync' : 'Synced',
      differences,
      ignoreExtraneous: !target && current !== undefined && compareOptions.ignoreExtraneous,
      normalizedTarget,
      normalizedLive,
      predictedLive: normalizedTarget,
    };
  }
  dropUndeclared(target, current);
  const own = fieldSetOf(live, (m) => m === options.fieldManager);
  const others = fieldSetOf(live, (m) => m !== options.fieldManager);
  const { predicted, differences } = predictLive(target, current, own, others);
  const [normalizedTarget, normalizedLive, predictedLive] = hideSecretData(
    target,
    current,
    predicted as KubeObjectLike,
  );
  return {
    status: differences.length > 0 ? 'OutOfSync' : 'Synced',
    differences,
    ignoreExtraneous: false,
    normalizedTarget,
    normalizedLive,
    predictedLive,
  };
}
