// The `argocd.argoproj.io/compare-options` annotation: comma-separated options on a resource.
import { isObject, type KubeObjectLike } from './types.js';

export const COMPARE_OPTIONS_ANNOTATION = 'argocd.argoproj.io/compare-options';

export interface ResourceCompareOptions {
  /** The object, live but not in git (generated), does not make its Application OutOfSync. */
  ignoreExtraneous: boolean;
  /**
   * `ServerSideDiff=true|false` as written (undefined when absent). Capstan accepts both: its
   * comparison is always the structured merge of git's object onto live with capstan's managed
   * fields, which is what a server-side apply dry run predicts for everything but webhooks.
   */
  serverSideDiff: boolean | undefined;
}

export function compareOptionsOf(...objects: (KubeObjectLike | undefined)[]): ResourceCompareOptions {
  const options = new Set<string>();
  for (const obj of objects) {
    const annotations = obj?.metadata?.annotations;
    const value = isObject(annotations) ? annotations[COMPARE_OPTIONS_ANNOTATION] : undefined;
    if (typeof value !== 'string') continue;
    for (const option of value.split(',')) options.add(option.trim());
  }
  const serverSideDiff = options.has('ServerSideDiff=true')
    ? true
    : options.has('ServerSideDiff=false')
      ? false
      : undefined;
  return { ignoreExtraneous: options.has('IgnoreExtraneous'), serverSideDiff };
}
