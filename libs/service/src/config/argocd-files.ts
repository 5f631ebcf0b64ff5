// Argo CD's configuration objects given as files at start (--argocd-config-dir): every *.yaml /
// *.yml / *.json file of the directory, each holding ConfigMaps argocd-cm, argocd-rbac-cm,
// argocd-cmd-params-cm or the Secret argocd-secret. Their keys are checked as the api checks an
// applied object (@capstan/policy checkArgoSettings): unknown and not implemented keys are warnings
// (problems in strict mode), wrong values are problems; the keys of this service become a layer
// between the environment and the configuration file.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  argoObjectOf,
  argoOverlay,
  checkArgoSettings,
  type ArgoConfigObject,
  type CapstanService,
} from '@capstan/policy';
import type { FieldViolation } from '../errors/errors.js';

export interface ArgoConfigDir {
  values: Map<string, { value: unknown; detail: string }>;
  warnings: string[];
  problems: FieldViolation[];
}

export function readArgoConfigDir(
  dir: string,
  service: CapstanService | undefined,
  strict: boolean,
): ArgoConfigDir {
  const out: ArgoConfigDir = { values: new Map(), warnings: [], problems: [] };
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
  const objects: Partial<Record<ArgoConfigObject, Record<string, unknown>>> = {};
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
      objects[got.object] = { ...objects[got.object], ...got.data };
    }
  }
  if (service)
    for (const [setting, v] of argoOverlay(objects, service))
      out.values.set(setting, { value: v.value, detail: `${v.from.join(', ')} (${dir})` });
  return out;
}
