// Kubernetes label selectors (matchLabels + matchExpressions) as Argo applies them to clusters and,
// for the per-generator `selector`, to flattened parameters (values are not restricted to label syntax).
import type { LabelSelector } from '../manifest/schema.js';

export function isEmptySelector(sel: LabelSelector | undefined): boolean {
  return (
    !sel || (Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0)
  );
}

export function selectorMatches(
  sel: LabelSelector | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!sel) return true;
  const has = (k: string) => Object.prototype.hasOwnProperty.call(labels, k);
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (!has(k) || labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const present = has(e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!present || !values.includes(labels[e.key] as string)) return false;
        break;
      case 'NotIn':
        if (present && values.includes(labels[e.key] as string)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
    }
  }
  return true;
}
