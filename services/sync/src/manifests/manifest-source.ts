// Where the objects of a sync come from. The seam for the repo service's manifest generation
// (capstan.repo.v1.RepoService over gRPC): until the sync service is wired to it, a sync request
// may carry its objects inline (tests, other systems that render themselves), Secrets excepted.
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
  /** The revision the objects were rendered from, when known. */
  revision: string | null;
  objects: KubeObject[];
}

export interface ManifestSource {
  render(
    app: Application,
    request: { revision?: string | undefined; manifests?: unknown[] | undefined },
  ): Promise<RenderedManifests>;
}

export class ManifestSourceError extends Error {}

/** Objects given in the sync request. */
export const inlineManifests: ManifestSource = {
  async render(app, request) {
    if (request.manifests === undefined) {
      throw new ManifestSourceError(
        `no manifests for Application ${app.metadata.name}: the request carries none and no repository manifest source is configured`,
      );
    }
    return {
      revision: request.revision ?? app.spec.source?.targetRevision ?? null,
      objects: request.manifests as KubeObject[],
    };
  },
};
