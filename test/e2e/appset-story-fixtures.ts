// The manifests and helpers of the appset story (appset-story.test.ts): the sets it writes, the
// ConfigMaps its apps deploy, and a bounded wait.
import { expect } from 'vitest';
import type { CliResult } from './api-harness.js';

export const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  greeting: hello\n`;

/** The set: a matrix of a list (env) and the directories apps/* of team-a's repository. */
export const appSet = (o: {
  name: string;
  project: string;
  repoURL: string;
  elements: string;
  preserve?: boolean;
}) =>
  `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: { name: ${o.name}, namespace: argocd }
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
    - matrix:
        generators:
          - list:
              elements: ${o.elements}
          - git:
              repoURL: '${o.repoURL}'
              revision: main
              directories: [{ path: 'apps/*' }]
  template:
    metadata:
      name: '{{.path.basename}}-{{.env}}'
    spec:
      project: ${o.project}
      source: { repoURL: '${o.repoURL}', targetRevision: main, path: '{{.path.path}}' }
      destination: { name: story, namespace: '${o.project}-{{.env}}' }
${o.preserve ? '  syncPolicy: { preserveResourcesOnDeletion: true }\n' : ''}`;

/** A set with a list generator only: it reads no repository, so anyone may have it generated. */
export const listSet = (o: { name: string; project: string; repoURL: string; elements: string }) =>
  `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: { name: ${o.name}, namespace: argocd }
spec:
  goTemplate: true
  generators: [{ list: { elements: ${o.elements} } }]
  template:
    metadata: { name: '{{.app}}-{{.env}}' }
    spec:
      project: ${o.project}
      source: { repoURL: '${o.repoURL}', targetRevision: main, path: 'apps/{{.app}}' }
      destination: { name: story, namespace: '${o.project}-{{.env}}' }
`;

export const ok = (r: CliResult, what = '') =>
  expect(r, `${what}\n${r.stderr}${r.stdout}`).toMatchObject({ code: 0 });

export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 90_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}
