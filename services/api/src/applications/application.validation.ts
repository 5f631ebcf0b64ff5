// Write-time validation of an Application: Argo CD's schema and semantic rules from @capstan/policy
// (the same ones the sync service reads it with) plus a valid name.
import { ValidationError, type FieldViolation } from '@capstan/service';
import {
  ApplicationSchema,
  applicationIssues,
  ARGO_API_VERSION,
  DEFAULT_CONTROL_NAMESPACE,
  dnsLabelProblem,
  dnsSubdomainProblem,
  type Application,
} from '@capstan/policy';
import { parseOrThrow, violationsOf } from '../support/validation.js';

const MAX_FINALIZERS = 16;

/**
 * Kept of the metadata: name, namespace, labels, annotations and finalizers (Argo CD users write
 * resources-finalizer.argocd.argoproj.io there). deletionTimestamp and ownerReferences are the
 * server's, never a writer's.
 */
export function normalizeApplication(app: Application): Application {
  const { name, namespace, labels, annotations } = app.metadata;
  const finalizers = (app.metadata as { finalizers?: unknown }).finalizers;
  return {
    apiVersion: ARGO_API_VERSION,
    kind: 'Application',
    metadata: {
      name,
      namespace: namespace ?? DEFAULT_CONTROL_NAMESPACE,
      labels: labels && Object.keys(labels).length > 0 ? labels : undefined,
      annotations: annotations && Object.keys(annotations).length > 0 ? annotations : undefined,
      ...(Array.isArray(finalizers) && finalizers.length > 0 ? { finalizers } : {}),
    },
    spec: app.spec,
  };
}

function finalizerViolations(app: Application, at: (p: string) => string): FieldViolation[] {
  const finalizers = (app.metadata as { finalizers?: unknown }).finalizers;
  if (finalizers === undefined) return [];
  if (!Array.isArray(finalizers))
    return [{ field: at('metadata.finalizers'), description: 'expected a list of strings' }];
  if (finalizers.length > MAX_FINALIZERS)
    return [{ field: at('metadata.finalizers'), description: `at most ${MAX_FINALIZERS} finalizers` }];
  const out: FieldViolation[] = [];
  finalizers.forEach((f, i) => {
    if (typeof f !== 'string' || f === '' || f.length > 253 || !/^[A-Za-z0-9./_-]+$/.test(f))
      out.push({
        field: at(`metadata.finalizers[${i}]`),
        description: 'expected a qualified name such as resources-finalizer.argocd.argoproj.io',
      });
  });
  return out;
}

export function validateApplication(manifest: unknown, prefix = ''): Application {
  const withKind =
    manifest && typeof manifest === 'object' && !Array.isArray(manifest)
      ? { apiVersion: ARGO_API_VERSION, kind: 'Application', ...(manifest as Record<string, unknown>) }
      : manifest;
  const app = normalizeApplication(parseOrThrow(ApplicationSchema, withKind, prefix));
  const violations: FieldViolation[] = [];
  const at = (p: string) => (prefix ? `${prefix}.${p}` : p);
  const nameProblem = dnsSubdomainProblem(app.metadata.name);
  if (nameProblem) violations.push({ field: at('metadata.name'), description: nameProblem });
  // Namespaces are Kubernetes namespace names (DNS labels), as the API server would require.
  const nsProblem = dnsLabelProblem(app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE);
  if (nsProblem) violations.push({ field: at('metadata.namespace'), description: nsProblem });
  const destination = app.spec.destination.namespace;
  const destProblem = destination ? dnsLabelProblem(destination) : undefined;
  if (destProblem) violations.push({ field: at('spec.destination.namespace'), description: destProblem });
  violations.push(...finalizerViolations(app, at));
  violations.push(...violationsOf(applicationIssues(app), prefix));
  if (violations.length > 0) throw new ValidationError(violations);
  return app;
}
