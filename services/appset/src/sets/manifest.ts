// An ApplicationSet as the appset service stores it: the manifest the user wrote (apiVersion, kind,
// metadata name/namespace/labels/annotations/finalizers, spec), validated by the engine's schema
// with field paths, never its status (the service computes that). Pure functions.
import {
  AppSetError,
  parseApplicationSet,
  type ApplicationSet as ParsedApplicationSet,
} from '@capstan/appset-engine';
import {
  ARGO_API_VERSION,
  canonicalJson,
  DEFAULT_CONTROL_NAMESPACE,
  dnsSubdomainProblem,
  inputLimitIssues,
  DEFAULT_INPUT_LIMITS,
  type PolicyIssue,
} from '@capstan/policy';
import { ValidationError } from '@capstan/service';

export interface StoredAppSet {
  apiVersion: string;
  kind: 'ApplicationSet';
  metadata: {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
  };
  spec: Record<string, unknown>;
}

export interface ValidatedAppSet {
  stored: StoredAppSet;
  /** The engine's view (defaults applied), for generation. */
  parsed: ParsedApplicationSet;
}

/** `<namespace>/<name>`: how the api and audit rows name a set. */
export const setKey = (s: { namespace: string; name: string }) => `${s.namespace}/${s.name}`;
/** The event stream (and CloudEvents subject) of a set. */
export const setStream = (s: { namespace: string; name: string }) => `applicationsets/${setKey(s)}`;

export function issuesToValidation(issues: readonly PolicyIssue[], cause?: unknown): ValidationError {
  return new ValidationError(
    issues.map((i) => ({ field: i.path, description: i.message })),
    cause === undefined ? undefined : { cause },
  );
}

/** Parses the manifest JSON of a request; every problem is a ValidationError naming its field. */
export function validateManifestJson(json: string, field = 'manifestJson'): ValidatedAppSet {
  let input: unknown;
  try {
    input = JSON.parse(json);
  } catch {
    throw new ValidationError([{ field, description: 'is not valid JSON' }]);
  }
  return validateManifest(input);
}

export function validateManifest(input: unknown): ValidatedAppSet {
  const limits = inputLimitIssues(input, DEFAULT_INPUT_LIMITS);
  if (limits.length > 0) throw issuesToValidation(limits);
  let parsed: ParsedApplicationSet;
  try {
    parsed = parseApplicationSet(input);
  } catch (err) {
    if (err instanceof AppSetError) throw issuesToValidation(err.issues, err);
    throw err;
  }
  const nameProblem = dnsSubdomainProblem(parsed.metadata.name);
  const namespace = parsed.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE;
  const nsProblem = dnsSubdomainProblem(namespace);
  const issues: PolicyIssue[] = [
    ...(nameProblem ? [{ path: 'metadata.name', message: nameProblem }] : []),
    ...(nsProblem ? [{ path: 'metadata.namespace', message: nsProblem }] : []),
  ];
  if (issues.length > 0) throw issuesToValidation(issues);
  const raw = input as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
  const meta = raw.metadata;
  const finalizers = Array.isArray(meta.finalizers) ? (meta.finalizers as unknown[]) : [];
  if (finalizers.some((f) => typeof f !== 'string'))
    throw new ValidationError([{ field: 'metadata.finalizers', description: 'must be a list of strings' }]);
  const stored: StoredAppSet = {
    apiVersion: ARGO_API_VERSION,
    kind: 'ApplicationSet',
    metadata: {
      name: parsed.metadata.name,
      namespace,
      ...(nonEmpty(parsed.metadata.labels) ? { labels: parsed.metadata.labels } : {}),
      ...(nonEmpty(parsed.metadata.annotations) ? { annotations: parsed.metadata.annotations } : {}),
      ...(finalizers.length > 0 ? { finalizers: finalizers as string[] } : {}),
    },
    spec: raw.spec,
  };
  return { stored, parsed };
}

function nonEmpty(v: Record<string, string> | undefined): v is Record<string, string> {
  return v !== undefined && Object.keys(v).length > 0;
}

/** The parts Argo CD compares to decide whether a create is a no-op (server/applicationset Create). */
const comparable = (s: StoredAppSet) => ({
  spec: s.spec,
  labels: s.metadata.labels ?? {},
  annotations: s.metadata.annotations ?? {},
  finalizers: s.metadata.finalizers ?? [],
});

export function sameAppSet(a: StoredAppSet, b: StoredAppSet): boolean {
  return canonicalJson(comparable(a)) === canonicalJson(comparable(b));
}

/** Which of the compared fields differ: `metadata.labels`, `spec.generators`, ... */
export function changedFields(before: StoredAppSet, after: StoredAppSet): string[] {
  const out: string[] = [];
  for (const k of ['labels', 'annotations', 'finalizers'] as const)
    if (canonicalJson(before.metadata[k] ?? null) !== canonicalJson(after.metadata[k] ?? null))
      out.push(`metadata.${k}`);
  const keys = new Set([...Object.keys(before.spec), ...Object.keys(after.spec)]);
  for (const k of [...keys].sort())
    if (canonicalJson(before.spec[k] ?? null) !== canonicalJson(after.spec[k] ?? null)) out.push(`spec.${k}`);
  return out;
}
