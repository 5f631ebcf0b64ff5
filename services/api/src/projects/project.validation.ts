// Write-time validation of an AppProject. The manifest schema, globs, ServiceAccount names and
// duplicate rules are the policy library's (the very checks the sync service applies), so the api
// and the sync can never disagree; the api adds name rules and the project roles' RBAC lines.
import { ValidationError, type FieldViolation } from '@capstan/service';
import {
  AppProjectSchema,
  ARGO_API_VERSION,
  compileProject,
  DEFAULT_CONTROL_NAMESPACE,
  dnsLabelProblem,
  dnsSubdomainProblem,
  type AppProject,
} from '@capstan/policy';
import { projectRoleLines, type ProjectRoleSpec } from '@capstan/rbac';
import { z } from 'zod';
import { parseOrThrow, violationsOf } from '../support/validation.js';

const RoleSchema = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  policies: z.array(z.string()).optional(),
  groups: z.array(z.string()).optional(),
});

export function projectRoles(project: AppProject): ProjectRoleSpec[] {
  return (project.spec.roles ?? []).map((r) => {
    const role = RoleSchema.parse(r);
    return { name: role.name, policies: role.policies ?? [], groups: role.groups ?? [] };
  });
}

/** Keeps what Capstan owns of a manifest: no status, no server-managed metadata. */
export function normalizeProject(project: AppProject): AppProject {
  const { name, namespace, labels, annotations } = project.metadata;
  return {
    apiVersion: ARGO_API_VERSION,
    kind: 'AppProject',
    metadata: {
      name,
      namespace: namespace ?? DEFAULT_CONTROL_NAMESPACE,
      labels: labels && Object.keys(labels).length > 0 ? labels : undefined,
      annotations: annotations && Object.keys(annotations).length > 0 ? annotations : undefined,
    },
    spec: project.spec,
  };
}

/** Validates an AppProject manifest (plain JSON) and returns it normalised, or throws ValidationError. */
export function validateProject(manifest: unknown, prefix = ''): AppProject {
  const withKind =
    manifest && typeof manifest === 'object' && !Array.isArray(manifest)
      ? { apiVersion: ARGO_API_VERSION, kind: 'AppProject', ...(manifest as Record<string, unknown>) }
      : manifest;
  const project = normalizeProject(parseOrThrow(AppProjectSchema, withKind, prefix));
  const violations: FieldViolation[] = [];
  const nameProblem = dnsSubdomainProblem(project.metadata.name);
  if (nameProblem) violations.push({ field: at(prefix, 'metadata.name'), description: nameProblem });
  const nsProblem = dnsLabelProblem(project.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE);
  if (nsProblem) violations.push({ field: at(prefix, 'metadata.namespace'), description: nsProblem });
  violations.push(...violationsOf(compileProject(project).issues, prefix));
  const roles = projectRoleLines(project.metadata.name, projectRoles(project));
  violations.push(...roles.problems.map((p) => ({ field: at(prefix, p.where), description: p.message })));
  if (violations.length > 0) throw new ValidationError(violations);
  return project;
}

function at(prefix: string, path: string): string {
  return prefix === '' ? path : `${prefix}.${path}`;
}
