// Builders for tests: Argo CD objects decoded by the same schemas as production input.
import {
  AppProjectSchema,
  ApplicationSchema,
  type AppProject,
  type Application,
} from '../manifests/schemas.js';
import { ProjectChain } from '../project/chain.js';

export const IN_CLUSTER_URL = 'https://kubernetes.default.svc';

export function project(name: string, spec: Record<string, unknown> = {}): AppProject {
  return AppProjectSchema.parse({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AppProject',
    metadata: { name, namespace: 'argocd' },
    spec,
  });
}

export function application(
  name: string,
  spec: { project: string; destination: Record<string, unknown> } & Record<string, unknown>,
  namespace = 'argocd',
): Application {
  return ApplicationSchema.parse({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name, namespace },
    spec: {
      source: { repoURL: 'https://git.example.com/apps.git', path: name, targetRevision: 'HEAD' },
      ...spec,
    },
  });
}

export function lookupOf(...projects: AppProject[]) {
  const byName = new Map(projects.map((p) => [p.metadata.name, p]));
  return (name: string) => byName.get(name);
}

export function chainOf(name: string, ...projects: AppProject[]): ProjectChain {
  const r = ProjectChain.resolve(name, lookupOf(...projects));
  if (!r.ok) throw new Error(r.reason);
  return r.chain;
}
