// ignoreDifferences (Application spec and system-level resource.customizations): which entries
// match an object (Argo: group and kind are globs, name and namespace exact when set), and what they
// remove from both sides before comparing (jsonPointers, jqPathExpressions, managedFieldsManagers).
import { globMatch } from '@capstan/glob';
import { InvalidArgumentError } from '@capstan/service';
import { checkJqExpression, DEFAULT_JQ_TIMEOUT_MS, jqDeleteSync } from './jq.js';
import { fieldSetOf, withoutOwned } from './managed-fields.js';
import { groupOf, isObject, type KubeObjectLike } from './types.js';

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
  /** Bound of one jq run (Argo's `ignore.normalizer.jq.timeout`, default 1 s). */
  readonly jqTimeoutMs?: number;
}

export interface CompileIgnoreOptions {
  jqTimeoutMs?: number;
}

const MAX_EXPRESSION_LENGTH = 4096;

/** RFC 6901 pointer → reference tokens; undefined when it is not a pointer. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** Validates the entries (pointers parse, jq compiles) once per Application. */
export async function compileIgnoreDifferences(
  entries: readonly IgnoreDifference[],
  options: CompileIgnoreOptions = {},
): Promise<IgnoreRules> {
  for (const [i, entry] of entries.entries()) {
    for (const pointer of entry.jsonPointers ?? []) {
      if (parsePointer(pointer) === undefined) {
        throw new InvalidArgumentError(
          `ignoreDifferences[${i}].jsonPointers: '${pointer}' is not a JSON pointer`,
        );
      }
    }
    for (const expression of entry.jqPathExpressions ?? []) {
      if (expression.length > MAX_EXPRESSION_LENGTH) {
        throw new InvalidArgumentError(
          `ignoreDifferences[${i}].jqPathExpressions: longer than ${MAX_EXPRESSION_LENGTH} characters`,
        );
      }
      try {
        await checkJqExpression(expression);
      } catch (error) {
        throw new InvalidArgumentError(
          `ignoreDifferences[${i}].jqPathExpressions: ${(error as Error).message}`,
          { cause: error },
        );
      }
    }
  }
  return { entries: [...entries], jqTimeoutMs: options.jqTimeoutMs };
}

/** Whether an entry applies to an object (Argo's ignoreNormalizer match). */
export function entryMatches(entry: IgnoreDifference, obj: KubeObjectLike): boolean {
  const metadata = obj.metadata ?? {};
  return (
    globMatch(entry.group ?? '', groupOf(obj.apiVersion)) &&
    globMatch(entry.kind, obj.kind ?? '') &&
    (!entry.name || entry.name === metadata.name) &&
    (!entry.namespace || entry.namespace === metadata.namespace)
  );
}

function removePointer(obj: unknown, tokens: readonly string[]): void {
  let node = obj;
  for (const [i, token] of tokens.entries()) {
    const last = i === tokens.length - 1;
    if (Array.isArray(node)) {
      if (!/^(0|[1-9]\d*)$/.test(token)) return;
      const index = Number(token);
      if (index >= node.length) return;
      if (last) node.splice(index, 1);
      else node = node[index];
    } else if (isObject(node)) {
      if (!Object.hasOwn(node, token)) return;
      if (last) delete node[token];
      else node = node[token];
    } else {
      return;
    }
  }
}

/**
 * Applies the matching entries to `obj` in place (it is a normalised copy). `liveForManagers` is
 * the live object whose managedFields say what managedFieldsManagers own. A jq run that fails
 * leaves the object as it was, as Argo's normalizer does (it logs and goes on).
 */
export function applyIgnores(
  obj: KubeObjectLike,
  rules: IgnoreRules | undefined,
  identity: KubeObjectLike,
  liveForManagers: KubeObjectLike | undefined,
): KubeObjectLike {
  let out = obj;
  for (const entry of rules?.entries ?? []) {
    if (!entryMatches(entry, identity)) continue;
    for (const pointer of entry.jsonPointers ?? []) {
      const tokens = parsePointer(pointer);
      if (tokens && tokens.length > 0) removePointer(out, tokens);
    }
    for (const expression of entry.jqPathExpressions ?? []) {
      try {
        const result = jqDeleteSync(out, expression, rules?.jqTimeoutMs ?? DEFAULT_JQ_TIMEOUT_MS);
        if (isObject(result)) out = result as KubeObjectLike;
      } catch {
        // Argo: "Failed to apply normalization patch" is logged and the patch skipped.
      }
    }
    const managers = new Set(entry.managedFieldsManagers ?? []);
    if (managers.size > 0) {
      const owned = fieldSetOf(liveForManagers, (m) => managers.has(m));
      if (owned) out = withoutOwned(out, owned) as KubeObjectLike;
    }
  }
  return out;
}
