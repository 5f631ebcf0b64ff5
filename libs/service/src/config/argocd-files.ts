// Argo CD's configuration objects given as files at start (--argocd-config-dir): every *.yaml /
// *.yml / *.json file of the directory, each holding ConfigMaps argocd-cm, argocd-rbac-cm,
// argocd-cmd-params-cm or the Secret argocd-secret. Their keys are checked as the api checks an
// applied object (@capstan/policy checkArgoSettings): unknown and not implemented keys are warnings
// (problems in strict mode), wrong values are problems; the keys of this service become a layer
// between the environment and the configuration file. The objects themselves are kept too
// (ArgoFileObjects): the api reads some keys from the object in force rather than from a setting of
// its own (@capstan/policy OBJECT_READ_SETTINGS: accounts, single sign-on, notifications), falling back
// to these files when no object was applied. A key of this service that it neither has a setting
// for nor reads from the objects is a warning naming it (a refusal in strict mode), never dropped.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  argoObjectOf,
  argoOverlay,
  checkArgoSettings,
  OBJECT_READ_SETTINGS,
  type ArgoConfigObject,
  type CapstanService,
} from '@capstan/policy';
import type { FieldViolation } from '../errors/errors.js';

/** The objects given as files, merged per object (a later file's keys win), with where they came from. */
export type ArgoFileObjects = Partial<
  Record<ArgoConfigObject, { data: Record<string, string>; files: string[] }>
>;

export interface ArgoConfigDir {
  values: Map<string, { value: unknown; detail: string }>;
  /** Every object given (secret values included: never logged, never shown). */
  objects: ArgoFileObjects;
  warnings: string[];
  problems: FieldViolation[];
}

/**
 * Reads the directory; `settings` are the service's own (a key of this service whose setting is
 * neither one of them nor read from the objects is named, not dropped; absent: not checked).
 */
export function readArgoConfigDir(
  dir: string,
  service: CapstanService | undefined,
  strict: boolean,
  settings?: readonly string[],
): ArgoConfigDir {
  const out: ArgoConfigDir = { values: new Map(), objects: {}, warnings: [], problems: [] };
  if (dir === '') return out;
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => /\.(ya?ml|json)$/.test(f))
      .sort();
  } catch (err) {
    out.problems.push({
      field: 'argocd.config-dir',
      description: `cannot read directory ${dir}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    });
    return out;
  }
  for (const f of files) {
    const path = join(dir, f);
    for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
      if (doc.errors.length > 0) {
        out.problems.push({
          field: path,
          description: `invalid YAML: ${doc.errors[0]!.message.split('\n')[0]}`,
        });
        continue;
      }
      const got = argoObjectOf(doc.toJS());
      if (!got) continue;
      if ('problem' in got) {
        out.problems.push({ field: path, description: got.problem });
        continue;
      }
      const check = checkArgoSettings(got.object, got.data, { strict });
      out.warnings.push(...check.warnings.map((w) => `${path}: ${w.key}: ${w.message}`));
      out.problems.push(
        ...check.problems.map((p) => ({ field: `${path}: ${p.key}`, description: p.message })),
      );
      // Values that are not strings were refused above (the start stops).
      const prev = out.objects[got.object];
      out.objects[got.object] = {
        data: { ...prev?.data, ...(got.data as Record<string, string>) },
        files: [...(prev?.files ?? []), path],
      };
    }
  }
  if (service) overlayOf(out, dir, service, settings && new Set(settings), strict);
  return out;
}

/** This service's settings from the objects; a key it would drop is a warning (strict: a problem). */
function overlayOf(
  out: ArgoConfigDir,
  dir: string,
  service: CapstanService,
  settings: ReadonlySet<string> | undefined,
  strict: boolean,
): void {
  const data: Partial<Record<ArgoConfigObject, Record<string, string>>> = {};
  for (const [name, o] of Object.entries(out.objects)) data[name as ArgoConfigObject] = o.data;
  for (const [setting, v] of argoOverlay(data, service)) {
    if (!settings || settings.has(setting)) {
      out.values.set(setting, { value: v.value, detail: `${v.from.join(', ')} (${dir})` });
      continue;
    }
    if (OBJECT_READ_SETTINGS.has(setting)) continue;
    for (const key of v.from) {
      const message = `${key} (${dir}): not read by the ${service} service from files given at start: ignored (apply it with capstan apply -f)`;
      if (strict) out.problems.push({ field: key, description: `${message} (settings.strict refuses it)` });
      else out.warnings.push(message);
    }
  }
}
