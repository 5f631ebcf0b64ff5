// Where the objects of a sync come from: the seam for the repo service's manifest generation
// (capstan.repo.v1.RepoService over gRPC, repo-manifests.ts). Always the Application's source: a
// sync request never carries objects, so sourceRepos and credential checks cannot be skipped.
import type { Application } from '@capstan/policy';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string | undefined;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  } & Record<string, unknown>;
  [key: string]: unknown;
}

export interface RenderedManifests {
  /** The revision the objects were rendered from, when known (a multi-source Application's first source's). */
  revision: string | null;
  /** A multi-source Application's: the commit of each source, in spec.sources order (Argo CD's revisions). */
  revisions?: string[];
  objects: KubeObject[];
}

export interface ManifestSource {
  render(
    app: Application,
    request: {
      operationId: string;
      revision?: string | undefined;
      /** A multi-source Application's pinned revision per source (a rollback's, automation's). */
      revisions?: readonly string[] | undefined;
    },
  ): Promise<RenderedManifests>;
}

export class ManifestSourceError extends Error {}
