// Sync options that read the live object before writing (pure, no I/O; execute.ts reads it as the
// sync identity and calls this): ApplyOutOfSyncOnly skips an object whose live state already
// matches (@capstan/diff's compareResource, the reconciler's comparison), and
// RespectIgnoreDifferences keeps the live value of the fields spec.ignoreDifferences names, so a
// sync does not undo what the comparison ignores (an HPA's replicas). Like Argo CD, the latter only
// acts when the object exists; Capstan applies it for jsonPointers entries (jqPathExpressions and
// managedFieldsManagers entries are reported, not applied: see docs/applications.md).
import { compareResource, type IgnoreDifference, type IgnoreRules } from '@capstan/diff';
import { FIELD_MANAGER } from '../kube/target-cluster.js';
import type { KubeObject } from '../manifests/manifest-source.js';
import { groupOf } from './plan.js';
import type { AppSyncOptions } from './sync-options.js';

type Json = Record<string, unknown>;

/** RFC 6901 tokens of a JSON pointer ("/spec/replicas" → ["spec", "replicas"]). */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .replace(/^\//, '')
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function lookup(obj: unknown, tokens: readonly string[]): { found: boolean; value?: unknown } {
  let at: unknown = obj;
  for (const t of tokens) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, t)) return { found: false };
    at = (at as Json)[t];
  }
  return { found: true, value: at };
}

/** A copy of `target` with the value at `tokens` set to `value`, or removed (`found` false). */
function put(target: unknown, tokens: readonly string[], found: boolean, value: unknown): unknown {
  if (tokens.length === 0) return found ? structuredClone(value) : target;
  const [head, ...rest] = tokens as [string, ...string[]];
  const isArray = Array.isArray(target);
  const base: Json | unknown[] = isArray
    ? [...(target as unknown[])]
    : target !== null && typeof target === 'object'
      ? { ...(target as Json) }
      : {};
  if (rest.length === 0) {
    if (found) (base as Json)[head] = structuredClone(value);
    else if (Array.isArray(base)) base.splice(Number(head), 1);
    else delete (base as Json)[head];
    return base;
  }
  const child = (base as Json)[head];
  if (child === undefined && !found) return base;
  (base as Json)[head] = put(child, rest, found, value);
  return base;
}

export function ignoreEntriesFor(entries: readonly IgnoreDifference[], o: KubeObject): IgnoreDifference[] {
  return entries.filter(
    (e) =>
      e.kind === o.kind &&
      (e.group ?? '') === groupOf(o.apiVersion) &&
      (e.name === undefined || e.name === '' || e.name === o.metadata.name) &&
      (e.namespace === undefined || e.namespace === '' || e.namespace === o.metadata.namespace),
  );
}

/** RespectIgnoreDifferences: the desired object with the live values of the ignored jsonPointers. */
export function keepIgnoredLiveValues(
  desired: KubeObject,
  live: KubeObject,
  entries: readonly IgnoreDifference[],
): KubeObject {
  let out: unknown = desired;
  for (const e of ignoreEntriesFor(entries, desired))
    for (const pointer of e.jsonPointers ?? []) {
      const tokens = pointerTokens(pointer);
      // Never the object's identity or what the server keeps.
      if (tokens.length === 0 || ['apiVersion', 'kind', 'status'].includes(tokens[0]!)) continue;
      const l = lookup(live, tokens);
      out = put(out, tokens, l.found, l.value);
    }
  return out as KubeObject;
}

export interface BeforeWriteContext {
  options: Pick<AppSyncOptions, 'applyOutOfSyncOnly' | 'respectIgnoreDifferences'>;
  entries: readonly IgnoreDifference[];
  ignore: IgnoreRules;
}

/** executePlan's beforeWrite for these options, or undefined when none needs the live object. */
export function beforeWriteFor(ctx: BeforeWriteContext) {
  const { options, entries, ignore } = ctx;
  if (!options.applyOutOfSyncOnly && !options.respectIgnoreDifferences) return undefined;
  return (
    _o: unknown,
    desired: KubeObject,
    live: KubeObject | undefined,
  ): { skip: string } | { object: KubeObject } => {
    const object =
      options.respectIgnoreDifferences && live ? keepIgnoredLiveValues(desired, live, entries) : desired;
    if (options.applyOutOfSyncOnly && live) {
      const cmp = compareResource(object, live, { ignore, fieldManager: FIELD_MANAGER });
      if (cmp.status === 'Synced')
        return { skip: 'unchanged: live state already matches (ApplyOutOfSyncOnly)' };
    }
    return { object };
  };
}

/** Entries RespectIgnoreDifferences cannot keep (jq, managers): one warning each. */
export function unsupportedRespectEntries(entries: readonly IgnoreDifference[]): string[] {
  return entries
    .filter((e) => (e.jqPathExpressions?.length ?? 0) > 0 || (e.managedFieldsManagers?.length ?? 0) > 0)
    .map(
      (e) =>
        `RespectIgnoreDifferences: ignoreDifferences of ${e.group ? `${e.group}/` : ''}${e.kind}${e.name ? ` ${e.name}` : ''}: only jsonPointers keep their live value on sync; jqPathExpressions and managedFieldsManagers are applied as git declares them`,
    );
}
