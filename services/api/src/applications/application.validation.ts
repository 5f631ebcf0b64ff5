// Write-time validation of an Application: Argo CD's schema from @capstan/policy (the same one the
// sync service reads it with), a valid name, and a destination that names a server or a cluster.
import { ValidationError, type FieldViolation } from '@capstan/service';
import {
  ApplicationSchema,
  ARGO_API_VERSION,
  DEFAULT_CONTROL_NAMESPACE,
  dnsSubdomainProblem,
  type Application,
} from '@capstan/policy';
import { parseOrThrow } from '../support/validation.js';

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
  const d = app.spec.destination;
  if (!d.server && !d.name)
    violations.push({ field: at('spec.destination'), description: 'server or name is required' });
  if (d.server && d.name)
    violations.push({ field: at('spec.destination'), description: 'give server or name, not both' });
  if (!app.spec.source && !(app.spec.sources && app.spec.sources.length > 0)) {
    violations.push({ field: at('spec.source'), description: 'required' });
  }
  if (violations.length > 0) throw new ValidationError(violations);
  return app;
}
