// Reading Argo CD manifests: YAML (several documents per text) or already-decoded objects, into
// AppProjects, Applications and cluster references, with every problem reported by field path.
import type { z } from 'zod';
import { formatPath, ManifestError, type PolicyIssue } from '../issues.js';
import { readYamlDocuments } from './yaml.js';
import {
  AppProjectSchema,
  ApplicationSchema,
  ARGO_API_VERSION,
  CLUSTER_SECRET_LABEL,
  ClusterSecretSchema,
  DEFAULT_CONTROL_NAMESPACE,
  type AppProject,
  type Application,
  type ClusterRef,
} from './schemas.js';

export interface ArgoManifests {
  readonly projects: AppProject[];
  readonly applications: Application[];
  readonly clusters: ClusterRef[];
}

/** Several documents failed; each ManifestError names its document and fields. */
export class ManifestErrors extends Error {
  override readonly name = 'ManifestErrors';
  constructor(readonly errors: readonly ManifestError[]) {
    super(errors.map((e) => e.message).join('\n'));
  }
}

/** zod issues as field-path issues; an unknown field is reported at its own path. */
export function issuesFromZod(error: z.ZodError, prefix: ReadonlyArray<PropertyKey> = []): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        issues.push({ path: formatPath([...path, key]), message: 'unknown field' });
      continue;
    }
    let message = issue.message;
    if (issue.code === 'invalid_type') {
      message =
        issue.input === undefined ? 'required' : `expected ${issue.expected}, got ${describe(issue.input)}`;
    } else if (issue.code === 'invalid_value' && issue.values.length === 1) {
      message = `must be ${JSON.stringify(issue.values[0])}, got ${JSON.stringify(issue.input)}`;
    }
    issues.push({ path: formatPath(path), message: message.charAt(0).toLowerCase() + message.slice(1) });
  }
  return issues;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function label(obj: unknown): string {
  const o = obj as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
  const kind = typeof o?.kind === 'string' ? o.kind : 'object';
  const name = typeof o?.metadata?.name === 'string' ? o.metadata.name : undefined;
  return name === undefined ? kind : `${kind} ${name}`;
}

/** Decodes one object (already parsed from YAML or JSON); throws ManifestError. */
export function decodeArgoObject(
  obj: unknown,
  origin: string,
):
  | { kind: 'AppProject'; value: AppProject }
  | { kind: 'Application'; value: Application }
  | { kind: 'Cluster'; value: ClusterRef } {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new ManifestError(origin, [{ path: '', message: `expected an object, got ${describe(obj)}` }]);
  }
  const o = obj as Record<string, unknown>;
  const missing: PolicyIssue[] = [];
  if (typeof o.apiVersion !== 'string' || o.apiVersion === '')
    missing.push({ path: 'apiVersion', message: 'required' });
  if (typeof o.kind !== 'string' || o.kind === '') missing.push({ path: 'kind', message: 'required' });
  const meta = o.metadata as { name?: unknown } | undefined;
  if (typeof meta?.name !== 'string' || meta.name === '')
    missing.push({ path: 'metadata.name', message: 'required' });
  if (missing.length > 0) throw new ManifestError(origin, missing);

  const kindKey = `${String(o.apiVersion)} ${String(o.kind)}`;
  switch (kindKey) {
    case `${ARGO_API_VERSION} AppProject`:
      return { kind: 'AppProject', value: decodeWith(AppProjectSchema, obj, origin) };
    case `${ARGO_API_VERSION} Application`:
      return { kind: 'Application', value: decodeWith(ApplicationSchema, obj, origin) };
    case 'v1 Secret':
      return { kind: 'Cluster', value: decodeClusterSecret(obj, origin) };
    default:
      throw new ManifestError(origin, [
        {
          path: 'kind',
          message: `unsupported kind ${JSON.stringify(o.kind)} of apiVersion ${JSON.stringify(o.apiVersion)} (expected ${ARGO_API_VERSION} AppProject or Application, or a v1 Secret labelled ${CLUSTER_SECRET_LABEL}: cluster)`,
        },
      ]);
  }
}

function decodeWith<S extends z.ZodType>(schema: S, obj: unknown, origin: string): z.output<S> {
  const result = schema.safeParse(obj, { reportInput: true });
  if (!result.success) throw new ManifestError(origin, issuesFromZod(result.error));
  return result.data;
}

function decodeClusterSecret(obj: unknown, origin: string): ClusterRef {
  const secret = decodeWith(ClusterSecretSchema, obj, origin);
  const type = secret.metadata.labels?.[CLUSTER_SECRET_LABEL];
  if (type !== 'cluster') {
    throw new ManifestError(origin, [
      {
        path: `metadata.labels["${CLUSTER_SECRET_LABEL}"]`,
        message: `must be "cluster" (only cluster Secrets are read here), got ${JSON.stringify(type ?? null)}`,
      },
    ]);
  }
  // Read only the three non-secret fields; `config` (the credentials) is never touched.
  const field = (key: 'name' | 'server' | 'project'): string | undefined => {
    const plain = secret.stringData?.[key];
    if (plain !== undefined) return plain;
    const encoded = secret.data?.[key];
    return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
  };
  const server = field('server');
  if (server === undefined || server === '') {
    throw new ManifestError(origin, [{ path: 'stringData.server', message: 'required' }]);
  }
  const project = field('project');
  return { name: field('name') ?? server, server, ...(project ? { project } : {}) };
}

function identity(
  kind: string,
  value: { metadata: { name: string; namespace?: string | undefined } },
): string {
  return `${kind}/${value.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE}/${value.metadata.name}`;
}

/**
 * Parses YAML text with any number of documents. Empty documents are skipped; every other
 * problem (YAML syntax, a missing apiVersion/kind/name, an unknown kind, a field of the wrong
 * shape, the same object twice) is collected and thrown together as ManifestErrors.
 */
export function parseArgoManifests(text: string, origin: string, into?: ArgoManifests): ArgoManifests {
  const out: ArgoManifests = into ?? { projects: [], applications: [], clusters: [] };
  const errors: ManifestError[] = [];
  const seen = new Set<string>([
    ...out.projects.map((p) => identity('AppProject', p)),
    ...out.applications.map((a) => identity('Application', a)),
  ]);
  let docs;
  try {
    docs = readYamlDocuments(text, origin);
  } catch (err) {
    if (err instanceof ManifestError) throw new ManifestErrors([err]);
    throw err;
  }
  for (const doc of docs) {
    const where = `${origin}: document ${doc.index}`;
    if (doc.issues) {
      errors.push(new ManifestError(where, doc.issues));
      continue;
    }
    const obj = doc.value;
    if (obj === null || obj === undefined) continue;
    const docOrigin = `${where} (${label(obj)})`;
    try {
      const decoded = decodeArgoObject(obj, docOrigin);
      if (decoded.kind === 'Cluster') {
        out.clusters.push(decoded.value);
        continue;
      }
      const key = identity(decoded.kind, decoded.value);
      if (seen.has(key)) {
        const [kind, ns, name] = key.split('/');
        errors.push(
          new ManifestError(docOrigin, [
            { path: 'metadata.name', message: `duplicate: ${kind} ${ns}/${name} is defined more than once` },
          ]),
        );
        continue;
      }
      seen.add(key);
      if (decoded.kind === 'AppProject') out.projects.push(decoded.value);
      else out.applications.push(decoded.value);
    } catch (err) {
      if (err instanceof ManifestError) errors.push(err);
      else throw err;
    }
  }
  if (errors.length > 0) throw new ManifestErrors(errors);
  return out;
}
