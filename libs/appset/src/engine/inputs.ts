// What a set's generators will read, known before running them: the api's pre-generate RBAC check
// (get on each repository and cluster, proposal 003) and the reconcile triggers (git push events).
import type { ApplicationSet, GeneratorSpec } from '../manifest/schema.js';

export interface GeneratorInputs {
  /** Repositories git generators read. `templated` when the URL uses a matrix parent's params: the
   * real URL is known only while generating (wrap GitProvider to check each call then). */
  readonly repos: { repoURL: string; revision: string; templated: boolean; path: string }[];
  /** Paths of clusters generators (they read the whole registry, then select). */
  readonly clusters: string[];
}

export function generatorInputs(appset: ApplicationSet): GeneratorInputs {
  const out: GeneratorInputs = { repos: [], clusters: [] };
  const visit = (g: GeneratorSpec, path: string) => {
    if (g.git)
      out.repos.push({
        repoURL: g.git.repoURL,
        revision: g.git.revision || 'HEAD',
        templated: g.git.repoURL.includes('{{') || (g.git.revision ?? '').includes('{{'),
        path: `${path}.git`,
      });
    if (g.clusters) out.clusters.push(`${path}.clusters`);
    g.matrix?.generators.forEach((c, i) => visit(c, `${path}.matrix.generators[${i}]`));
    g.merge?.generators.forEach((c, i) => visit(c, `${path}.merge.generators[${i}]`));
  };
  appset.spec.generators.forEach((g, i) => visit(g, `spec.generators[${i}]`));
  return out;
}
