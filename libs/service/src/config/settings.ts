// Configuration: every setting has a dotted key (`application.sync.impersonation.enabled`), an
// environment variable, optionally a flag, a zod schema and a default. Precedence, highest first:
//   1. command-line flag   2. environment variable   3. Argo CD ConfigMaps applied through the api
//   (live, see LiveSettings)   4. Argo CD ConfigMap files (--argocd-config-dir)   5. configuration
//   file (YAML, nested or flat dotted keys)   6. default
// A value that fails its schema stops start-up with a message naming the setting and its source. A
// key of the configuration file or the ConfigMaps that this service does not know is a warning naming
// it (and the nearest known key), or a refusal with settings.strict.
// Secret settings have no flag (argv is visible to every user of the machine) and are never echoed.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import type { CapstanService } from '@capstan/policy';
import { ValidationError, type FieldViolation } from '../errors/errors.js';
import { fileKeyWarnings, lookupKey } from './file-keys.js';
import { readArgoConfigDir, type ArgoFileObjects } from './argocd-files.js';

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
  /** Whose keys of the Argo CD ConfigMaps apply here (`sync`: timeout.reconciliation, ...). */
  service?: CapstanService;
}

export type ConfigSourceKind = 'flag' | 'env' | 'applied' | 'argocd-file' | 'file' | 'default';

export interface ConfigSource {
  kind: ConfigSourceKind;
  /** `flag --enable-impersonation`, `environment CAPSTAN_...`, `argocd-cm: timeout.reconciliation (file x)`. */
  detail: string;
}

/** Where every setting came from, and what the operator should know about the configuration given. */
export interface ConfigReport {
  sources: Record<string, ConfigSource>;
  warnings: string[];
  /**
   * The Argo CD objects given as files at start (--argocd-config-dir), for the keys a service reads
   * from the object in force (the api's accounts, single sign-on, notifications) when none is
   * applied. Holds secret values: never logged, never shown.
   */
  argoFiles?: ArgoFileObjects;
}

export function envNameOf(key: string, setting: Setting): string {
  return setting.env ?? `CAPSTAN_${key.replace(/[.-]/g, '_').toUpperCase()}`;
}

export function flagNamesOf(key: string, setting: Setting): readonly string[] {
  if (setting.secret) return [];
  return setting.flags ?? [key.replace(/\./g, '-')];
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

function readConfigFile(file: string | undefined): unknown {
  if (!file) return {};
  try {
    return parseYaml(readFileSync(file, 'utf8')) ?? {};
  } catch (err) {
    throw new ValidationError([{ field: 'config', description: `cannot read configuration file ${file}` }], {
      cause: err,
    });
  }
}

export function loadConfig<T extends Settings>(settings: T, sources: ConfigSources = {}): ConfigOf<T> {
  return loadConfigReport(settings, sources).config;
}

/** The configuration, where each value came from, and the warnings to log at start. */
export function loadConfigReport<T extends Settings>(
  settings: T,
  sources: ConfigSources = {},
): { config: ConfigOf<T>; report: ConfigReport } {
  const env = sources.env ?? process.env;
  const flags = parseFlags(settings, sources.argv ?? []);
  const file = sources.file ?? (flags.get('$config') as string | undefined) ?? env.CAPSTAN_CONFIG;
  const fileDoc = readConfigFile(file);
  const pick = (key: string): { raw: unknown; source: ConfigSource } | undefined => {
    const setting = settings[key]!;
    const envName = envNameOf(key, setting);
    if (flags.has(key))
      return {
        raw: flags.get(key),
        source: { kind: 'flag', detail: `flag --${flagNamesOf(key, setting)[0]}` },
      };
    if (env[envName] !== undefined && env[envName] !== '')
      return { raw: env[envName], source: { kind: 'env', detail: `environment ${envName}` } };
    return undefined;
  };
  // Strictness and the ConfigMap directory are settings themselves (flag, environment or file).
  const early = (key: string) => {
    if (!settings[key]) return undefined;
    const given = pick(key)?.raw ?? lookupKey(fileDoc, key) ?? settings[key].default;
    return settings[key].schema.safeParse(given).data as unknown;
  };
  const strict = early('settings.strict') === true;
  const dir = (early('argocd.config-dir') as string | undefined) ?? '';
  const argo = readArgoConfigDir(dir, sources.service, strict, Object.keys(settings));
  const warnings = [...argo.warnings, ...(file ? fileKeyWarnings(fileDoc, Object.keys(settings), file) : [])];
  const violations: FieldViolation[] = [...argo.problems];
  if (strict && file) {
    for (const w of fileKeyWarnings(fileDoc, Object.keys(settings), file))
      violations.push({ field: 'config', description: `${w} (settings.strict refuses it)` });
    warnings.splice(argo.warnings.length);
  }
  const result: Record<string, unknown> = {};
  const where: Record<string, ConfigSource> = {};
  for (const [key, setting] of Object.entries(settings)) {
    let chosen = pick(key);
    const fromArgo = argo.values.get(key);
    const fromFile = lookupKey(fileDoc, key);
    if (!chosen && fromArgo)
      chosen = { raw: fromArgo.value, source: { kind: 'argocd-file', detail: fromArgo.detail } };
    if (!chosen && fromFile !== undefined)
      chosen = { raw: fromFile, source: { kind: 'file', detail: `file ${file}` } };
    chosen ??= { raw: setting.default, source: { kind: 'default', detail: 'default' } };
    const { raw, source } = chosen;
    const parsed = setting.schema.safeParse(raw);
    if (parsed.success) {
      result[key] = parsed.data;
      where[key] = source;
    } else {
      const why = parsed.error.issues.map((i) => i.message).join(', ');
      // Never echo the offending value of a secret; for other settings it helps the operator.
      const shown = setting.secret || raw === undefined ? '' : ` (got ${JSON.stringify(raw)})`;
      violations.push({ field: key, description: `invalid value from ${source.detail}${shown}: ${why}` });
    }
  }
  if (violations.length > 0) throw new ValidationError(violations);
  const report: ConfigReport = { sources: where, warnings };
  if (Object.keys(argo.objects).length > 0) report.argoFiles = argo.objects;
  return { config: result as ConfigOf<T>, report };
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
