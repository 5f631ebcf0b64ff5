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

export function normalizeApplication(app: Application): Application {
  const { name, namespace, labels, annotations } = app.metadata;
  return {
    apiVersion: ARGO_API_VERSION,
    kind: 'Application',
    metadata: {
      name,
      namespace: namespace ?? DEFAULT_CONTROL_NAMESPACE,
      labels: labels && Object.keys(labels).length > 0 ? labels : undefined,
      annotations: annotations && Object.keys(annotations).length > 0 ? annotations : undefined,
    },
    spec: app.spec,
  };
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
  violations.push(...violationsOf(applicationIssues(app), prefix));
  if (violations.length > 0) throw new ValidationError(violations);
  return app;
}
