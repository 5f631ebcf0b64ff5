// Manifests from the repo service (capstan.repo.v1.RepoService/GenerateManifests over
// authenticated internal gRPC): the repo service picks the project's credential, checks out and
// renders; the sync service only receives the objects.
import { repov1, unary } from '@capstan/proto';
import { fromPeer, type ServiceClient } from '@capstan/service-identity';
import { CapstanError } from '@capstan/service';
import { applicationSources, DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import { sourceOptionsMessage } from './source-message.js';
import { ManifestSourceError, type KubeObject, type ManifestSource } from './manifest-source.js';

// What the repo service says about the source itself (bad path, unknown revision, no access: a
// failure that is not retryable) fails the sync with that reason. Anything else (unavailable,
// deadline) is retried like a down cluster (isUnreachable).

export function repoManifests(options: {
  address: string;
  /** The sync service's identity towards repo: mutual TLS and its token. */
  identity: ServiceClient;
}): ManifestSource & { close(): void } {
  const client = new repov1.RepoServiceClient(options.address, options.identity.credentials);
  return {
    async render(app, request) {
      const sources = applicationSources(app);
      if (sources.length === 0)
        throw new ManifestSourceError(`Application ${app.metadata.name} has no source`);
      const objects: KubeObject[] = [];
      let revision: string | null = null;
      for (const src of sources) {
        if (src.ref && !src.path) continue; // a values-only source of a multi-source Application
        const res = await fromPeer('repo', () =>
          unary(
            client.generateManifests.bind(client),
            {
              source: {
                repoUrl: src.repoURL,
                // A requested revision (e.g. the SHA an automated sync was triggered by) wins for a single source.
                // (A chart's version is its targetRevision: a requested revision names a commit.)
                targetRevision:
                  (sources.length === 1 && !src.chart ? request.revision : undefined) ??
                  src.targetRevision ??
                  (src.chart ? '' : 'HEAD'),
                path: src.path ?? '.',
                chart: src.chart ?? '',
                ...sourceOptionsMessage(app, src),
              },
              application: {
                name: app.metadata.name,
                namespace: app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
                project: app.spec.project,
              },
            },
            { metadata: options.identity.metadata(), timeoutMs: 120_000 },
          ),
        ).catch((err: unknown) => {
          if (err instanceof CapstanError && !err.retryable)
            throw new ManifestSourceError(`repo service: ${src.repoURL} ${src.path ?? ''}: ${err.message}`);
          throw err;
        });
        revision ??= res.revision;
        for (const doc of res.manifests) objects.push(JSON.parse(doc) as KubeObject);
      }
      return { revision, objects };
    },
    close: () => client.close(),
  };
}
