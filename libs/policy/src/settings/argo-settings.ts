// Checks the data of Argo CD's configuration objects key by key (pure, no I/O): which Capstan
// setting each key sets, with Argo's meaning and its value read from Argo's string form; a key
// Capstan does not know, or knows but does not implement, is a warning naming it (and the nearest
// known key when it looks like a typo), or a problem in strict mode; a value of the wrong type is
// always a problem naming the key. The same answer in the api (apply), every service (files given
// at start) and the CLI (`capstan admin settings validate`).
import { closest, distance } from 'fastest-levenshtein';
import { parse as parseYaml } from 'yaml';
import { parseGoDuration } from '../project/sync-windows.js';
import { readFilteredResources } from './resource-filter.js';
import { readOidcConfig, readScopes } from './oidc-config.js';
import { readNotificationsConfig } from '../notifications/config.js';
import {
  ARGO_KEYS,
  ARGO_SECRET_OBJECTS,
  type ArgoConfigObject,
  type ArgoKeySpec,
  type ArgoValueKind,
  type CapstanService,
} from './argo-keys.js';

export interface SettingsNotice {
  /** `argocd-cm: application.sync.impersonation.enabled` */
  readonly key: string;
  readonly message: string;
}

/** A key Capstan implements, its value converted for the Capstan setting it sets. */
export interface MappedArgoSetting {
  readonly object: ArgoConfigObject;
  readonly key: string;
  readonly spec: ArgoKeySpec & { capstan: NonNullable<ArgoKeySpec['capstan']> };
  readonly value: unknown;
}

export interface ArgoSettingsCheck {
  readonly mapped: MappedArgoSetting[];
  readonly warnings: SettingsNotice[];
  /** Wrong values always; unknown and not implemented keys in strict mode. */
  readonly problems: SettingsNotice[];
}

const MAX_VALUE_BYTES = 1024 * 1024;
const LOG_LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
// Go's strconv.ParseBool, which Argo CD reads its switches with.
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

function patternOf(key: string): RegExp {
  // Only the catalog's own constant keys become expressions, never input.
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace('<name>', '[^.]+').replace('<rest>', '.+')}$`);
}

const COMPILED = ARGO_KEYS.map((spec) => ({
  spec,
  re: patternOf(spec.key),
  // The most specific entry wins: exact keys first, then the longest literal part.
  weight: spec.key.includes('<') ? spec.key.replace(/<[a-z]+>/g, '').length : 10_000,
}));

export function argoKeySpec(object: ArgoConfigObject, key: string): ArgoKeySpec | undefined {
  let best: (typeof COMPILED)[number] | undefined;
  for (const c of COMPILED) {
    if (c.spec.object !== object || !c.re.test(key)) continue;
    if (!best || c.weight > best.weight) best = c;
  }
  return best?.spec;
}

/**
 * A catalog key as it would read for `key`: each `<name>` takes the key's segment at its place and
 * `<rest>` the key's remaining segments, so `accounts.<name>.enabled` reads `accounts.alice.enabled`
 * for `accounts.alice.enabeld`. Undefined when the key has too few segments.
 */
function instantiate(pattern: string, key: string): string | undefined {
  if (!pattern.includes('<')) return pattern;
  const given = key.split('.');
  const out: string[] = [];
  for (const [i, seg] of pattern.split('.').entries()) {
    if (seg === '<rest>') {
      if (i >= given.length) return undefined;
      return [...out, ...given.slice(i)].join('.');
    }
    if (seg === '<name>') {
      if (i >= given.length) return undefined;
      out.push(given[i]!);
    } else out.push(seg);
  }
  return out.join('.');
}

/**
 * The known key nearest to a misspelled one, when it is near enough to be a typo: the catalog's
 * exact keys, and its placeholder keys read with the key's own segments (`accounts.alice.enabled`,
 * `resource.customizations.health.<the rest>`). `within` bounds the distance (default: a fifth of
 * the key's length, at least 2).
 */
export function nearestArgoKey(object: ArgoConfigObject, key: string, within?: number): string | undefined {
  const names = new Set<string>();
  for (const s of ARGO_KEYS) {
    if (s.object !== object) continue;
    const name = instantiate(s.key, key);
    if (name !== undefined && name !== key && !name.startsWith('<')) names.add(name);
  }
  if (names.size === 0) return undefined;
  const near = closest(key, [...names]);
  return distance(key, near) <= (within ?? Math.max(2, Math.floor(key.length / 5))) ? near : undefined;
}

/**
 * A key that falls under a catalog wildcard Capstan does not implement (`controller.<rest>`) but is
 * one or two letters from a known key (`controller.operaton.processors`) is a misspelling of that
 * key, not one of Argo's other component parameters.
 */
const WILDCARD_TYPO_DISTANCE = 2;

/** Argo's string form read as the value a Capstan setting takes; a string is a problem. */
export function readArgoValue(kind: ArgoValueKind, text: string): { value: unknown } | { problem: string } {
  switch (kind) {
    case 'bool':
      if (TRUE.has(text)) return { value: true };
      if (FALSE.has(text)) return { value: false };
      return { problem: `expected "true" or "false", got ${JSON.stringify(text)}` };
    case 'duration': {
      const ms = parseGoDuration(text);
      if (ms === undefined)
        return { problem: `expected a duration such as "180s" or "3m", got ${JSON.stringify(text)}` };
      // Argo CD's `0` (timeout.reconciliation) turns the periodic refresh off; anything else below a
      // second would make every Application re-render continuously.
      if (ms !== 0 && ms < 1000)
        return { problem: `must be 0 (off) or at least 1s, got ${JSON.stringify(text)}` };
      return { value: Math.round(ms) };
    }
    case 'seconds':
    case 'int':
    case 'number': {
      const n = Number(text.trim());
      if (text.trim() === '' || !Number.isFinite(n) || (kind !== 'number' && !Number.isInteger(n)) || n < 0)
        return {
          problem: `expected a ${kind === 'number' ? 'non-negative number' : 'non-negative integer'}, got ${JSON.stringify(text)}`,
        };
      return { value: kind === 'seconds' ? n * 1000 : n };
    }
    case 'yaml':
      try {
        return { value: parseYaml(text, { maxAliasCount: 100 }) as unknown };
      } catch (err) {
        return { problem: `not valid YAML: ${(err as Error).message.split('\n')[0]}` };
      }
    case 'match-mode':
      if (text === 'glob') return { value: text };
      if (text === 'regex')
        return {
          problem:
            'regex is not supported: Capstan matches RBAC policies with globs only (a regular expression in a policy would not match in linear time)',
        };
      return { problem: `expected "glob", got ${JSON.stringify(text)}` };
    case 'log-level':
      return LOG_LEVELS.has(text)
        ? { value: text }
        : { problem: `expected one of ${[...LOG_LEVELS].join(', ')}, got ${JSON.stringify(text)}` };
    case 'resource-filter': {
      const read = readArgoValue('yaml', text);
      if ('problem' in read) return read;
      return readFilteredResources(read.value);
    }
    case 'ignore-differences': {
      const read = readArgoValue('yaml', text);
      if ('problem' in read) return read;
      const doc = read.value ?? {};
      if (typeof doc !== 'object' || Array.isArray(doc))
        return { problem: 'must be a map of jsonPointers, jqPathExpressions, managedFieldsManagers' };
      for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
        if (!['jsonPointers', 'jqPathExpressions', 'managedFieldsManagers'].includes(k))
          return {
            problem: `unknown field ${JSON.stringify(k)} (expected jsonPointers, jqPathExpressions, managedFieldsManagers)`,
          };
        if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
          return { problem: `${k}: must be a list of strings` };
      }
      return { value: doc };
    }
    case 'capabilities': {
      const caps = text
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean);
      const bad = caps.find((c) => c !== 'login' && c !== 'apiKey');
      return bad === undefined
        ? { value: caps }
        : { problem: `unknown capability ${JSON.stringify(bad)} (expected apiKey and/or login)` };
    }
    case 'oidc-config':
      return readOidcConfig(text);
    case 'scopes':
      return readScopes(text);
    case 'notifications':
      // The key alone, read as the notifier reads it; a key that does not read is named with why.
      return { value: text };
    case 'lua':
    case 'string':
      return { value: text };
  }
}

function readNotificationsKey(key: string, text: string): { value: unknown } | { problem: string } {
  const problem = readNotificationsConfig({ [key]: text }).problems[0];
  return problem === undefined
    ? { value: text }
    : { problem: problem.split(`: ${key}: `).slice(1).join(': ') };
}

function unknownMessage(object: ArgoConfigObject, key: string): string {
  const near = nearestArgoKey(object, key);
  return `unknown key ${JSON.stringify(key)} in ${object}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}: ignored`;
}

/** Checks one object's data; `strict` turns unknown and not implemented keys into problems. */
export function checkArgoSettings(
  object: ArgoConfigObject,
  data: Readonly<Record<string, unknown>>,
  opts: { strict: boolean },
): ArgoSettingsCheck {
  const mapped: MappedArgoSetting[] = [];
  const warnings: SettingsNotice[] = [];
  const problems: SettingsNotice[] = [];
  const notice = (key: string, message: string) => ({ key: `${object}: ${key}`, message });
  for (const key of Object.keys(data).sort()) {
    const raw = data[key];
    if (typeof raw !== 'string') {
      problems.push(
        notice(key, `must be a string (Argo CD ConfigMap values are strings; quote it: "${String(raw)}")`),
      );
      continue;
    }
    if (Buffer.byteLength(raw, 'utf8') > MAX_VALUE_BYTES) {
      problems.push(notice(key, `value larger than ${MAX_VALUE_BYTES} bytes`));
      continue;
    }
    const matched = argoKeySpec(object, key);
    const misspelled =
      matched && !matched.capstan && matched.key.includes('<')
        ? nearestArgoKey(object, key, WILDCARD_TYPO_DISTANCE)
        : undefined;
    const spec = misspelled === undefined ? matched : undefined;
    if (!spec) {
      (opts.strict ? problems : warnings).push(notice(key, unknownMessage(object, key)));
      continue;
    }
    const read =
      spec.value === 'notifications' ? readNotificationsKey(key, raw) : readArgoValue(spec.value, raw);
    if ('problem' in read) {
      // A sensitive value is never quoted back.
      problems.push(notice(key, spec.sensitive ? `invalid value (${spec.value})` : read.problem));
      continue;
    }
    if (!spec.capstan) {
      (opts.strict ? problems : warnings).push(
        notice(key, `recognised but not implemented by Capstan: ignored (${spec.note ?? 'not implemented'})`),
      );
      continue;
    }
    mapped.push({ object, key, spec: spec as MappedArgoSetting['spec'], value: read.value });
  }
  return { mapped, warnings, problems };
}

export function isArgoConfigObject(name: string): name is ArgoConfigObject {
  return (ARGO_KEYS as readonly ArgoKeySpec[]).some((s) => s.object === name);
}

export function isSensitiveArgoKey(object: ArgoConfigObject, key: string): boolean {
  return ARGO_SECRET_OBJECTS.includes(object) || argoKeySpec(object, key)?.sensitive === true;
}

/** One Capstan setting's value from applied Argo objects, and which keys gave it. */
export interface ArgoOverlayValue {
  readonly value: unknown;
  /** `argocd-cm: timeout.reconciliation`, ... */
  readonly from: string[];
  readonly live: boolean;
}

/**
 * The Capstan settings of `service` that the given objects' data set. Several keys may feed one
 * setting, as in Argo CD: policy.csv and every policy.<name>.csv are joined (in key order);
 * the resource.customizations keys form the map of argocd-cm data the health and diff libraries read.
 * Only keys that pass checkArgoSettings count (the caller reports the rest).
 */
export function argoOverlay(
  objects: Readonly<Partial<Record<ArgoConfigObject, Readonly<Record<string, unknown>>>>>,
  service: CapstanService,
): Map<string, ArgoOverlayValue> {
  const out = new Map<string, ArgoOverlayValue>();
  for (const [object, data] of Object.entries(objects) as [ArgoConfigObject, Record<string, unknown>][]) {
    // Notifications objects set no setting: the api's notifier reads them whole.
    if (object.startsWith('argocd-notifications-')) continue;
    for (const m of checkArgoSettings(object, data, { strict: false }).mapped) {
      if (m.spec.capstan.service !== service) continue;
      const setting = m.spec.capstan.setting;
      const from = `${object}: ${m.key}`;
      const prev = out.get(setting);
      let value = m.value;
      if (setting === 'rbac.policy-csv' && prev) value = `${String(prev.value)}\n${String(m.value)}`;
      // Several keys feed one map: the raw argocd-cm keys, for the library that reads them.
      if (setting === 'resource.customizations' || setting === 'accounts' || setting === 'kustomize.versions')
        value = { ...((prev?.value as Record<string, unknown>) ?? {}), [m.key]: data[m.key] };
      out.set(setting, { value, from: [...(prev?.from ?? []), from], live: m.spec.capstan.live });
    }
  }
  return out;
}
