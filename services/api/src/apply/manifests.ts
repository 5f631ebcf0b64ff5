// Reads the documents of a declarative apply: Argo CD AppProjects and Applications (decoded by
// @capstan/policy, exactly as the sync service reads them) and Argo CD's repository and cluster
// Secrets (labelled argocd.argoproj.io/secret-type). Every problem of every document is collected.
import type { FieldViolation } from '@capstan/service';
import { ValidationError } from '@capstan/service';
import {
  DEFAULT_CONTROL_NAMESPACE,
  DEFAULT_YAML_LIMITS,
  dnsLabelProblem,
  dnsSubdomainProblem,
  ManifestError,
  readYamlDocuments,
  type AppProject,
  type Application,
  type YamlLimits,
} from '@capstan/policy';
import { z } from 'zod';
import { validateProject } from '../projects/project.validation.js';
import { validateApplication } from '../applications/application.validation.js';
import { validateClusterRegistration, type ClusterRegistration } from '../clusters/cluster.validation.js';
import { parseOrThrow, violationsOf } from '../support/validation.js';
import { applicationSetManifest, refOf } from '../applicationsets/applicationsets.service.js';
import {
  ARGO_CONFIG_OBJECTS,
  ARGO_SECRET_OBJECTS,
  argoObjectOf,
  type ArgoConfigObject,
} from '@capstan/policy';

export const SECRET_TYPE_LABEL = 'argocd.argoproj.io/secret-type';

export interface RepositoryInput {
  repo: string;
  project: string;
  type: string;
  name: string;
  username: string;
  password: string;
  sshPrivateKey: string;
  insecure: boolean;
  /** Argo CD's enableOCI / insecureOCIForceHttp (Helm charts in an OCI registry). */
  enableOci?: boolean;
  insecureOciForceHttp?: boolean;
  /** The declarative Secret as given, when the credential came from one (its name round-trips). */
  secretManifest?: unknown;
}

export type ApplyItem =
  | { kind: 'AppProject'; doc: number; value: AppProject }
  | { kind: 'Application'; doc: number; value: Application }
  | { kind: 'Cluster'; doc: number; value: ClusterRegistration }
  | { kind: 'Repository'; doc: number; value: RepositoryInput }
  /** Argo CD's ApplicationSet, handed to the appset service (which validates its spec with field paths). */
  | { kind: 'ApplicationSet'; doc: number; value: Record<string, unknown> }
  /** Argo CD's configuration objects: ConfigMaps argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm, Secret argocd-secret. */
  | { kind: 'Settings'; doc: number; value: { object: ArgoConfigObject; data: Record<string, string> } };

const SETTINGS_OBJECT = new Set<string>(ARGO_CONFIG_OBJECTS);
const isSettingsSecret = (name: string) => (ARGO_SECRET_OBJECTS as readonly string[]).includes(name);

/** A ConfigMap (or Secret argocd-secret) of Argo CD's settings; a value that is not a string is named. */
function decodeSettings(obj: unknown, doc: number): ApplyItem {
  const got = argoObjectOf(obj);
  if (!got || 'problem' in got)
    throw new ValidationError([
      { field: 'metadata.name', description: got ? got.problem : 'expected a ConfigMap' },
    ]);
  const problems: FieldViolation[] = [];
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(got.data)) {
    if (typeof v === 'string') data[k] = v;
    else
      problems.push({
        field: `data["${k}"]`,
        description: 'must be a string (Argo CD ConfigMap values are strings: quote it)',
      });
  }
  if (problems.length > 0) throw new ValidationError(problems);
  return { kind: 'Settings', doc, value: { object: got.object, data } };
}

const SecretSchema = z.looseObject({
  apiVersion: z.literal('v1'),
  kind: z.literal('Secret'),
  metadata: z.looseObject({
    name: z.string().min(1),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
  type: z.string().optional(),
  data: z.record(z.string(), z.string()).optional(),
  stringData: z.record(z.string(), z.string()).optional(),
});

const STANDARD_TOP = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status', 'operation']);
const STANDARD_META = new Set([
  'name',
  'namespace',
  'labels',
  'annotations',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'finalizers',
  'managedFields',
  'ownerReferences',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generateName',
]);

function strictProblems(obj: Record<string, unknown>, secret: boolean): FieldViolation[] {
  const out: FieldViolation[] = [];
  const top = secret
    ? new Set(['apiVersion', 'kind', 'metadata', 'type', 'data', 'stringData', 'binaryData', 'immutable'])
    : STANDARD_TOP;
  for (const k of Object.keys(obj)) if (!top.has(k)) out.push({ field: k, description: 'unknown field' });
  const meta = obj.metadata;
  if (meta && typeof meta === 'object') {
    for (const k of Object.keys(meta))
      if (!STANDARD_META.has(k)) out.push({ field: `metadata.${k}`, description: 'unknown field' });
  }
  return out;
}

function secretFields(secret: z.output<typeof SecretSchema>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(secret.data ?? {}))
    out.set(k, Buffer.from(v, 'base64').toString('utf8'));
  for (const [k, v] of Object.entries(secret.stringData ?? {})) out.set(k, v);
  return out;
}

function decodeSecret(obj: unknown, doc: number): ApplyItem {
  const secret = parseOrThrow(SecretSchema, obj);
  const type = secret.metadata.labels?.[SECRET_TYPE_LABEL];
  const f = secretFields(secret);
  if (type === 'cluster') {
    let config: unknown = {};
    const raw = f.get('config');
    if (raw) {
      try {
        config = JSON.parse(raw);
      } catch {
        throw new ValidationError([
          { field: 'stringData.config', description: 'must be JSON (Argo CD cluster config)' },
        ]);
      }
    }
    const namespaces = (f.get('namespaces') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    try {
      return {
        kind: 'Cluster',
        doc,
        value: validateClusterRegistration({
          server: f.get('server') ?? '',
          name: f.get('name') ?? '',
          config,
          namespaces,
          project: f.get('project') ?? '',
          labels: Object.fromEntries(
            Object.entries(secret.metadata.labels ?? {}).filter(([k]) => k !== SECRET_TYPE_LABEL),
          ),
        }),
      };
    } catch (err) {
      if (err instanceof ValidationError) {
        throw new ValidationError(err.violations.map((v) => ({ ...v, field: `stringData.${v.field}` })));
      }
      throw err;
    }
  }
  if (type === 'repository' || type === 'repo-creds') {
    if (type === 'repo-creds') {
      throw new ValidationError([
        {
          field: `metadata.labels["${SECRET_TYPE_LABEL}"]`,
          description: 'repo-creds (credential templates) are not supported; use repository',
        },
      ]);
    }
    const url = f.get('url') ?? '';
    if (!url) throw new ValidationError([{ field: 'stringData.url', description: 'required' }]);
    return {
      kind: 'Repository',
      doc,
      value: {
        repo: url,
        project: f.get('project') ?? '',
        type: f.get('type') ?? 'git',
        name: f.get('name') ?? '',
        username: f.get('username') ?? '',
        password: f.get('password') ?? '',
        sshPrivateKey: f.get('sshPrivateKey') ?? '',
        insecure: (f.get('insecure') ?? '') === 'true',
        enableOci: (f.get('enableOCI') ?? '') === 'true',
        insecureOciForceHttp: (f.get('insecureOCIForceHttp') ?? '') === 'true',
        secretManifest: obj,
      },
    };
  }
  throw new ValidationError([
    {
      field: `metadata.labels["${SECRET_TYPE_LABEL}"]`,
      description: `must be "repository" or "cluster", got ${JSON.stringify(type ?? null)}`,
    },
  ]);
}

/** An ApplicationSet document: Argo CD's shape with a DNS name (the appset service validates the spec). */
function readApplicationSet(obj: Record<string, unknown>): Record<string, unknown> {
  const manifest = applicationSetManifest(obj, '');
  const { name, namespace } = refOf(manifest);
  const problems: FieldViolation[] = [];
  const nameProblem = dnsSubdomainProblem(name);
  if (nameProblem) problems.push({ field: 'metadata.name', description: nameProblem });
  const nsProblem = dnsLabelProblem(namespace);
  if (nsProblem) problems.push({ field: 'metadata.namespace', description: nsProblem });
  if (problems.length > 0) throw new ValidationError(problems);
  return manifest;
}

/** Parses and validates every document; throws one ValidationError naming document and field. */
export function readManifests(
  text: string,
  strict: boolean,
  limits: YamlLimits = DEFAULT_YAML_LIMITS,
): ApplyItem[] {
  const items: ApplyItem[] = [];
  const violations: FieldViolation[] = [];
  const seen = new Map<string, number>();
  let docs;
  try {
    docs = readYamlDocuments(text, 'manifests', limits);
  } catch (err) {
    if (err instanceof ManifestError) throw new ValidationError(violationsOf(err.issues, 'manifests'));
    throw err;
  }
  docs.forEach(({ index: n, value: obj, issues }) => {
    if (issues) {
      for (const i of issues)
        violations.push({
          field: i.path ? `document ${n}: ${i.path}` : `document ${n}`,
          description: i.message,
        });
      return;
    }
    if (obj === null || obj === undefined) return;
    const o = obj as { kind?: unknown; apiVersion?: unknown; metadata?: { name?: unknown } };
    const where = `document ${n} (${typeof o.kind === 'string' ? o.kind : 'object'}${typeof o.metadata?.name === 'string' ? ` ${o.metadata.name}` : ''})`;
    try {
      if (typeof obj !== 'object' || Array.isArray(obj))
        throw new ValidationError([{ field: '(root)', description: 'expected an object' }]);
      const name = typeof o.metadata?.name === 'string' ? o.metadata.name : '';
      const isSettings =
        o.apiVersion === 'v1' &&
        (o.kind === 'ConfigMap' || (o.kind === 'Secret' && isSettingsSecret(name))) &&
        (o.kind === 'ConfigMap' ||
          !(o.metadata as { labels?: Record<string, unknown> } | undefined)?.labels?.[SECRET_TYPE_LABEL]);
      const isSecret = o.apiVersion === 'v1' && o.kind === 'Secret' && !isSettings;
      if (strict) {
        const problems = strictProblems(obj as Record<string, unknown>, isSecret || isSettings);
        if (problems.length > 0) throw new ValidationError(problems);
      }
      let item: ApplyItem;
      if (isSettings) {
        if (!SETTINGS_OBJECT.has(name))
          throw new ValidationError([
            {
              field: 'metadata.name',
              description: `unsupported ConfigMap ${JSON.stringify(name)} (expected argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm or argocd-notifications-cm)`,
            },
          ]);
        item = decodeSettings(obj, n);
      } else if (isSecret) item = decodeSecret(obj, n);
      else if (o.apiVersion === 'argoproj.io/v1alpha1' && o.kind === 'AppProject')
        item = { kind: 'AppProject', doc: n, value: validateProject(obj) };
      else if (o.apiVersion === 'argoproj.io/v1alpha1' && o.kind === 'Application')
        item = { kind: 'Application', doc: n, value: validateApplication(obj) };
      else if (o.apiVersion === 'argoproj.io/v1alpha1' && o.kind === 'ApplicationSet')
        item = { kind: 'ApplicationSet', doc: n, value: readApplicationSet(obj as Record<string, unknown>) };
      else {
        throw new ValidationError([
          {
            field: 'kind',
            description: `unsupported ${JSON.stringify(o.apiVersion)} ${JSON.stringify(o.kind)} (expected argoproj.io/v1alpha1 AppProject, Application or ApplicationSet, a v1 Secret labelled ${SECRET_TYPE_LABEL}, or a v1 ConfigMap argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm, argocd-notifications-cm or Secret argocd-secret, argocd-notifications-secret)`,
          },
        ]);
      }
      const key = identity(item);
      const first = seen.get(key);
      if (first !== undefined)
        throw new ValidationError([
          { field: 'metadata.name', description: `duplicate of document ${first} (${key})` },
        ]);
      seen.set(key, n);
      items.push(item);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      for (const v of err.violations)
        violations.push({ field: `${where}: ${v.field}`, description: v.description });
    }
  });
  if (violations.length > 0) throw new ValidationError(violations);
  if (items.length === 0)
    throw new ValidationError([{ field: 'manifests', description: 'no documents to apply' }]);
  return items;
}

export function identity(item: ApplyItem): string {
  switch (item.kind) {
    case 'AppProject':
      return `AppProject ${item.value.metadata.name}`;
    case 'Application':
      return `Application ${item.value.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE}/${item.value.metadata.name}`;
    case 'Cluster':
      return `Cluster ${item.value.server}`;
    case 'Repository':
      return `Repository ${item.value.project ? `${item.value.project}/` : ''}${item.value.repo}`;
    case 'ApplicationSet': {
      const ref = refOf(item.value);
      return `ApplicationSet ${ref.namespace}/${ref.name}`;
    }
    case 'Settings':
      return `${isSettingsSecret(item.value.object) ? 'Secret' : 'ConfigMap'} ${item.value.object}`;
  }
}
