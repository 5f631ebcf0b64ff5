// System-level ignoreDifferences of argocd-cm, as Argo CD reads them: the keys
// `resource.customizations.ignoreDifferences.<group_kind>` (`all` for every kind; `<Kind>` alone for
// the core group), each a YAML map of jsonPointers / jqPathExpressions / managedFieldsManagers, and
// the same under `ignoreDifferences` of an entry of the legacy `resource.customizations` block. They
// apply to every Application, before its own spec.ignoreDifferences.
import { parse } from 'yaml';
import { InvalidArgumentError } from '@capstan/service';
import type { IgnoreDifference } from './ignore.js';

const PREFIX = 'resource.customizations.ignoreDifferences.';

function groupKindOf(key: string, gk: string): { group: string; kind: string } {
  if (gk === 'all') return { group: '*', kind: '*' };
  const parts = gk.split('_');
  if (parts.length === 2 && parts[1]) return { group: parts[0]!, kind: parts[1] };
  if (parts.length === 1 && gk !== '') return { group: '', kind: gk };
  throw new InvalidArgumentError(`${key}: expected <group>_<kind>, <kind> or all, got ${JSON.stringify(gk)}`);
}

function listOf(key: string, field: string, v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    throw new InvalidArgumentError(`${key}: ${field}: must be a list of strings`);
  return v as string[];
}

function entryOf(key: string, gk: { group: string; kind: string }, value: unknown): IgnoreDifference {
  let doc: unknown = value;
  if (typeof value === 'string') {
    try {
      doc = parse(value, { maxAliasCount: 100 }) ?? {};
    } catch (err) {
      throw new InvalidArgumentError(`${key}: not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new InvalidArgumentError(
      `${key}: must be a map (jsonPointers, jqPathExpressions, managedFieldsManagers)`,
    );
  const d = doc as Record<string, unknown>;
  const out: IgnoreDifference = { group: gk.group, kind: gk.kind };
  const pointers = listOf(key, 'jsonPointers', d.jsonPointers);
  const jq = listOf(key, 'jqPathExpressions', d.jqPathExpressions);
  const managers = listOf(key, 'managedFieldsManagers', d.managedFieldsManagers);
  if (pointers) out.jsonPointers = pointers;
  if (jq) out.jqPathExpressions = jq;
  if (managers) out.managedFieldsManagers = managers;
  return out;
}

/** The system-level entries of argocd-cm data; a bad key throws InvalidArgumentError naming it. */
export function systemIgnoreDifferencesFromArgoCdCm(
  data: Readonly<Record<string, unknown>>,
): IgnoreDifference[] {
  const out: IgnoreDifference[] = [];
  const block = data['resource.customizations'];
  if (typeof block === 'string' && block.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = parse(block, { maxAliasCount: 100 });
    } catch (err) {
      throw new InvalidArgumentError(
        `resource.customizations: not valid YAML: ${(err as Error).message.split('\n')[0]}`,
      );
    }
    for (const [gk, entry] of Object.entries((parsed ?? {}) as Record<string, unknown>)) {
      const ignore = (entry as { ignoreDifferences?: unknown } | null)?.ignoreDifferences;
      if (ignore === undefined) continue;
      const slash = gk.indexOf('/');
      const groupKind =
        slash < 0 ? { group: '', kind: gk } : { group: gk.slice(0, slash), kind: gk.slice(slash + 1) };
      out.push(entryOf(`resource.customizations: ${gk}: ignoreDifferences`, groupKind, ignore));
    }
  }
  for (const key of Object.keys(data).sort()) {
    if (!key.startsWith(PREFIX)) continue;
    out.push(entryOf(key, groupKindOf(key, key.slice(PREFIX.length)), data[key]));
  }
  return out;
}
