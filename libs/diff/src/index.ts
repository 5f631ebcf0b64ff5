// @capstan/diff: is a live object what git declares? (pure, no I/O). Argo CD's comparison:
// normalised desired vs live, ignoreDifferences, compare-options annotation, managed fields.
// CONTRACT (the reconciler and `capstan app diff` code against it): compileIgnoreDifferences once
// per Application (it may compile jq), then compareResource per object, synchronously.
// STUB: compares the fields git declares, without normalisation, until the real rules land.

export type KubeObjectLike = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, unknown> & { name?: string; namespace?: string };
};

/** Application spec.ignoreDifferences / argocd-cm resource.customizations.ignoreDifferences entry. */
export interface IgnoreDifference {
  group?: string;
  kind: string;
  name?: string;
  namespace?: string;
  jsonPointers?: string[];
  jqPathExpressions?: string[];
  managedFieldsManagers?: string[];
}

export interface IgnoreRules {
  readonly entries: readonly IgnoreDifference[];
}

export async function compileIgnoreDifferences(entries: readonly IgnoreDifference[]): Promise<IgnoreRules> {
  return { entries };
}

export interface CompareOptions {
  ignore?: IgnoreRules;
  /** Capstan's server-side apply field manager: fields it owns but git no longer declares are drift. */
  fieldManager: string;
}

export interface ResourceComparison {
  status: 'Synced' | 'OutOfSync';
  /** JSON paths that differ (after normalisation and ignores), for messages. */
  differences: string[];
  /** compare-options IgnoreExtraneous on a live object git does not declare. */
  ignoreExtraneous: boolean;
  /** What a diff shows: both sides normalised the same way (Secrets' values masked). */
  normalizedTarget: KubeObjectLike | undefined;
  normalizedLive: KubeObjectLike | undefined;
}

function subset(want: unknown, have: unknown, path: string, out: string[]): void {
  if (want !== null && typeof want === 'object') {
    if (have === null || typeof have !== 'object') {
      out.push(path);
      return;
    }
    for (const [k, v] of Object.entries(want as Record<string, unknown>)) {
      subset(v, (have as Record<string, unknown>)[k], `${path}/${k}`, out);
    }
    return;
  }
  if (want !== have) out.push(path);
}

export function compareResource(
  desired: KubeObjectLike | undefined,
  live: KubeObjectLike | undefined,
  _options: CompareOptions,
): ResourceComparison {
  const differences: string[] = [];
  if (!desired || !live) differences.push('');
  else subset(desired, live, '', differences);
  return {
    status: differences.length === 0 ? 'Synced' : 'OutOfSync',
    differences,
    ignoreExtraneous: false,
    normalizedTarget: desired,
    normalizedLive: live,
  };
}
