// The custom health checks of the sync service: argocd-cm `data` keys (resource.customizations,
// resource.customizations.health.<group>_<kind>, resource.customizations.useOpenLibs.<group>_<kind>)
// read from the YAML file of the `resource.customizations-file` setting at start-up, compiled once
// into the HealthAssessor every worker uses. A file that does not load, a key that does not parse or
// a script that does not compile stops the start with the file and the key at fault.
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { InvalidArgumentError } from '@capstan/service';
import {
  createHealthAssessor,
  HealthCheckCompileError,
  HealthConfigError,
  healthCustomizationsFromArgoCdCm,
  type HealthAssessor,
} from '@capstan/health';

/** The file holds argocd-cm's `data` map, or a whole argocd-cm ConfigMap (its `data` is read). */
function dataOf(file: string, doc: unknown): Record<string, unknown> {
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new InvalidArgumentError(
      `${file}: must be a map of argocd-cm data keys (or an argocd-cm ConfigMap)`,
    );
  const d = doc as Record<string, unknown>;
  if (d.kind === 'ConfigMap') {
    const data = d.data ?? {};
    if (typeof data !== 'object' || Array.isArray(data) || data === null)
      throw new InvalidArgumentError(`${file}: data: must be a map of argocd-cm data keys`);
    return data as Record<string, unknown>;
  }
  return d;
}

/**
 * The assessor of the file's checks with `applied` (argocd-cm keys from --argocd-config-dir or an
 * applied argocd-cm) on top, key by key.
 */
export async function loadHealthAssessor(
  file: string,
  applied: Record<string, string> = {},
): Promise<HealthAssessor> {
  const data = { ...(file === '' ? {} : await readCustomizationsFile(file)), ...applied };
  if (Object.keys(data).length === 0) return createHealthAssessor();
  try {
    return await createHealthAssessor({ customizations: healthCustomizationsFromArgoCdCm(data) });
  } catch (err) {
    if (err instanceof HealthConfigError || err instanceof HealthCheckCompileError)
      throw new InvalidArgumentError(`${file || 'argocd-cm'}: ${err.message}`, { cause: err });
    throw err;
  }
}

async function readCustomizationsFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(
      `resource.customizations-file ${file}: cannot be read: ${(err as Error).message}`,
      { cause: err },
    );
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new InvalidArgumentError(`${file}: not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  return dataOf(file, doc);
}
