// Configuration: every setting has a dotted key (`application.sync.impersonation.enabled`), an
// environment variable, optionally a flag, a zod schema and a default. Precedence, highest first:
//   1. command-line flag   2. environment variable   3. configuration file (YAML)   4. default
// A value that fails its schema stops start-up with a message naming the setting and its source.
// Secret settings have no flag (argv is visible to every user of the machine) and are never echoed.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ValidationError, type FieldViolation } from '../errors/errors.js';

export interface Setting<S extends z.ZodType = z.ZodType> {
  schema: S;
  default?: z.input<S>;
  /** Environment variable; defaults to CAPSTAN_ + the key upper-cased with `.`/`-` as `_`. */
  env?: string;
  /** Long flag names without dashes (`enable-impersonation`); defaults to the key with `.` as `-`. */
  flags?: readonly string[];
  /** A secret may come from the environment or the file only, and is never logged. */
  secret?: boolean;
  description: string;
}

export type Settings = Record<string, Setting>;
export type ConfigOf<T extends Settings> = { [K in keyof T]: z.output<T[K]['schema']> };

export interface ConfigSources {
  argv?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Path of a YAML file; when absent, `--config` or CAPSTAN_CONFIG names it. */
  file?: string;
}

export function envNameOf(key: string, setting: Setting): string {
  return setting.env ?? `CAPSTAN_${key.replace(/[.-]/g, '_').toUpperCase()}`;
}

export function flagNamesOf(key: string, setting: Setting): readonly string[] {
  if (setting.secret) return [];
  return setting.flags ?? [key.replace(/\./g, '-')];
}

function lookupPath(doc: unknown, key: string): unknown {
  let cur: unknown = doc;
  for (const part of key.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Flags given without a value (`--enable-impersonation`) mean true for boolean settings. */
function parseFlags(settings: Settings, argv: readonly string[]): Map<string, string | boolean> {
  const options: Record<string, { type: 'string' | 'boolean' }> = { config: { type: 'string' } };
  const keyOfFlag = new Map<string, string>();
  for (const [key, setting] of Object.entries(settings)) {
    for (const flag of flagNamesOf(key, setting)) {
      // A boolean setting (one with a boolean default) is a switch: `--enable-impersonation`.
      options[flag] = { type: typeof setting.default === 'boolean' ? 'boolean' : 'string' };
      keyOfFlag.set(flag, key);
    }
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  } catch (err) {
    throw new ValidationError([{ field: 'argv', description: (err as Error).message.toLowerCase() }], {
      cause: err,
    });
  }
  const out = new Map<string, string | boolean>();
  for (const [flag, value] of Object.entries(parsed.values)) {
    if (flag === 'config') out.set('$config', value as string);
    const key = keyOfFlag.get(flag);
    if (key !== undefined && value !== undefined) out.set(key, value as string | boolean);
  }
  return out;
}

export function loadConfig<T extends Settings>(settings: T, sources: ConfigSources = {}): ConfigOf<T> {
  const env = sources.env ?? process.env;
  const flags = parseFlags(settings, sources.argv ?? []);
  const file = sources.file ?? (flags.get('$config') as string | undefined) ?? env.CAPSTAN_CONFIG;
  let fileDoc: unknown = {};
  if (file) {
    try {
      fileDoc = parseYaml(readFileSync(file, 'utf8')) ?? {};
    } catch (err) {
      throw new ValidationError(
        [{ field: 'config', description: `cannot read configuration file ${file}` }],
        {
          cause: err,
        },
      );
    }
  }

  const violations: FieldViolation[] = [];
  const result: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(settings)) {
    const envName = envNameOf(key, setting);
    let raw: unknown;
    let source: string;
    if (flags.has(key)) {
      raw = flags.get(key);
      source = `flag --${flagNamesOf(key, setting)[0]}`;
    } else if (env[envName] !== undefined && env[envName] !== '') {
      raw = env[envName];
      source = `environment ${envName}`;
    } else if (lookupPath(fileDoc, key) !== undefined) {
      raw = lookupPath(fileDoc, key);
      source = `file ${file}`;
    } else {
      raw = setting.default;
      source = 'default';
    }
    const parsed = setting.schema.safeParse(raw);
    if (parsed.success) {
      result[key] = parsed.data;
    } else {
      const why = parsed.error.issues.map((i) => i.message).join(', ');
      // Never echo the offending value of a secret; for other settings it helps the operator.
      const shown = setting.secret || raw === undefined ? '' : ` (got ${JSON.stringify(raw)})`;
      violations.push({ field: key, description: `invalid value from ${source}${shown}: ${why}` });
    }
  }
  if (violations.length > 0) throw new ValidationError(violations);
  return result as ConfigOf<T>;
}

/** A markdown table of the settings, for the package READMEs and `--help`. */
export function describeSettings(settings: Settings): string {
  const rows = Object.entries(settings).map(([key, s]) => {
    const flags = flagNamesOf(key, s)
      .map((f) => `\`--${f}\``)
      .join(', ');
    const def = s.secret ? '' : s.default === undefined ? '' : `\`${JSON.stringify(s.default)}\``;
    return `| \`${key}\` | \`${envNameOf(key, s)}\` | ${flags || '—'} | ${def} | ${s.description} |`;
  });
  return [
    '| key | environment | flag | default | meaning |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
