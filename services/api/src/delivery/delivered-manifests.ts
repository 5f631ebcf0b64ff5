// The argoproj.io objects the sync service hands over, read as the api reads any write of them:
// each validated (AppProject, Application as directly written ones; ApplicationSet in Argo CD's
// shape, validated by the appset service when it is written), an invalid one refused with its field
// paths; and the order projects are written in (parents first).
import { ValidationError } from '@capstan/service';
import { DEFAULT_CONTROL_NAMESPACE, type Application, type AppProject } from '@capstan/policy';
import { applicationSetManifest } from '../applicationsets/applicationsets.service.js';
import type { DeliveredObject, DeliveredSet, DeliveryVerdict } from './delivery-checks.js';

export interface Validators {
  project(raw: unknown): AppProject;
  application(raw: unknown): Application;
}

/** Each object validated as a directly written one; an invalid one is refused with its field paths. */
export function parseDelivered(
  json: readonly string[],
  validate: Validators,
): { objects: DeliveredObject[]; invalid: DeliveryVerdict[] } {
  const objects: DeliveredObject[] = [];
  const invalid: DeliveryVerdict[] = [];
  json.forEach((text, i) => {
    let raw: { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
    try {
      raw = JSON.parse(text) as typeof raw;
    } catch {
      throw new ValidationError([{ field: `objects_json[${i}]`, description: 'not JSON' }]);
    }
    const kind = typeof raw?.kind === 'string' ? raw.kind : '';
    try {
      if (kind === 'AppProject') {
        const value = validate.project(raw);
        objects.push({ kind, ...keyOf(value), value });
      } else if (kind === 'Application') {
        const value = validate.application(raw);
        objects.push({ kind, ...keyOf(value), value });
      } else if (kind === 'ApplicationSet') {
        const value = applicationSetManifest(raw as Record<string, unknown>, '') as unknown as DeliveredSet;
        objects.push({ kind, ...keyOf(value), value });
      } else {
        throw new ValidationError([
          { field: 'kind', description: 'expected AppProject, Application or ApplicationSet' },
        ]);
      }
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const name = typeof raw?.metadata?.name === 'string' ? raw.metadata.name : `#${i}`;
      const namespace =
        typeof raw?.metadata?.namespace === 'string' ? raw.metadata.namespace : DEFAULT_CONTROL_NAMESPACE;
      invalid.push({
        kind: kind || 'object',
        namespace,
        name,
        object: kind === 'AppProject' ? name : `*/${name}`,
        action: 'refused',
        allowed: false,
        reason: `${kind || 'object'} ${JSON.stringify(name)} is invalid: ${err.message}`,
      });
    }
  });
  return { objects, invalid };
}

export function keyOf(o: { metadata: { namespace?: string | undefined; name: string } }) {
  return { namespace: o.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE, name: o.metadata.name };
}

export function parentsFirst(objects: readonly DeliveredObject[]): DeliveredObject[] {
  const projects = new Map(objects.flatMap((o) => (o.kind === 'AppProject' ? [[o.name, o] as const] : [])));
  const out: DeliveredObject[] = [];
  const visit = (o: DeliveredObject, depth: number) => {
    if (out.includes(o) || depth > projects.size) return;
    const parent = o.kind === 'AppProject' ? o.value.spec.parentProject : undefined;
    const p = parent ? projects.get(parent) : undefined;
    if (p) visit(p, depth + 1);
    if (!out.includes(o)) out.push(o);
  };
  for (const o of projects.values()) visit(o, 0);
  return out;
}
