// Turns YAML or JSON text into Kubernetes objects: multi-document YAML, JSON objects or arrays,
// `kind: List` expanded; anything that is not an object with apiVersion and kind is an error that
// names the file and document.
import { DEFAULT_YAML_LIMITS, ManifestError, readYamlDocuments, type YamlLimits } from '@capstan/policy';
import { ManifestRenderError } from './manifest-errors.js';

/**
 * Rendered manifests are tenant input too (a repository's YAML, a chart's output) but legitimately
 * larger and deeper than API requests (CRD schemas, dashboards in ConfigMaps): the same reader with
 * wider bounds; the yaml library's alias bound stays.
 */
const RENDERED_LIMITS: YamlLimits = {
  ...DEFAULT_YAML_LIMITS,
  maxDepth: 512,
  maxStringLength: 4 * 1024 * 1024,
  maxEntries: 100_000,
  maxBytes: 64 * 1024 * 1024,
};

export type KubeObject = Record<string, unknown> & { apiVersion: string; kind: string };

export function parseManifests(text: string, origin: string, format: 'yaml' | 'json'): KubeObject[] {
  const docs: unknown[] = [];
  if (format === 'json') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new ManifestRenderError(`${origin}: invalid JSON: ${(err as Error).message}`, { cause: err });
    }
    docs.push(...(Array.isArray(value) ? value : [value]));
  } else {
    let read;
    try {
      read = readYamlDocuments(text, origin, RENDERED_LIMITS);
    } catch (err) {
      if (err instanceof ManifestError) throw new ManifestRenderError(err.message, { cause: err });
      throw err;
    }
    for (const doc of read) {
      if (doc.issues) {
        const first = doc.issues[0]!;
        throw new ManifestRenderError(
          first.message.startsWith('invalid YAML: ')
            ? `${origin}: invalid YAML in document ${doc.index}: ${first.message.slice('invalid YAML: '.length)}`
            : `${origin} document ${doc.index}: ${first.path ? `${first.path}: ` : ''}${first.message}`,
        );
      }
      docs.push(doc.value);
    }
  }
  const objects: KubeObject[] = [];
  docs.forEach((doc, index) => {
    if (doc === null || doc === undefined) return;
    const where = `${origin} document ${index + 1}`;
    if (typeof doc !== 'object' || Array.isArray(doc))
      throw new ManifestRenderError(`${where}: must be an object`);
    const obj = doc as Record<string, unknown>;
    if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') {
      throw new ManifestRenderError(`${where}: must have string apiVersion and kind`);
    }
    if (obj.kind === 'List' || (obj.kind.endsWith('List') && Array.isArray(obj.items))) {
      for (const item of (obj.items as unknown[] | undefined) ?? [])
        objects.push(...parseManifests(JSON.stringify(item), `${where} items`, 'json'));
      return;
    }
    objects.push(obj as KubeObject);
  });
  return objects;
}
