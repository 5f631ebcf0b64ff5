// Turns YAML or JSON text into Kubernetes objects: multi-document YAML, JSON objects or arrays,
// `kind: List` expanded; anything that is not an object with apiVersion and kind is an error that
// names the file and document.
import { parseAllDocuments } from 'yaml';
import { ManifestRenderError } from './manifest-errors.js';

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
    for (const [index, doc] of parseAllDocuments(text).entries()) {
      if (doc.errors.length > 0) {
        const first = doc.errors[0];
        throw new ManifestRenderError(
          `${origin}: invalid YAML in document ${index + 1}: ${first?.message.split('\n')[0] ?? 'parse error'}`,
        );
      }
      docs.push(doc.toJS());
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
