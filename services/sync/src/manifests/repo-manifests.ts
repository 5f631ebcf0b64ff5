// Manifests from the repo service (capstan.repo.v1.RepoService/GenerateManifests over
// authenticated internal gRPC): the repo service picks the project's credential, checks out and
// renders; the sync service only receives the objects.
//
// A multi-source Application (Argo CD's spec.sources) first resolves every source's revision
// (ResolveRevision, the same credential selection), so each render and each `$ref/…` value file
// reads the commit status.sync.revisions then reports; a ref source without a path renders nothing.
import { repov1, unary, type UnaryMethod } from '@capstan/proto';
import { fromPeer, type ServiceClient } from '@capstan/service-identity';
import { CapstanError } from '@capstan/service';
import {
  applicationSources,
  DEFAULT_CONTROL_NAMESPACE,
  hasMultipleSources,
  type Application,
  type ApplicationSource,
} from '@capstan/policy';
import { sourceOptionsMessage } from './source-message.js';
import {
  ManifestSourceError,
  type KubeObject,
  type ManifestSource,
  type RenderedManifests,
} from './manifest-source.js';

// What the repo service says about the source itself (bad path, unknown revision, no access: a
// failure that is not retryable) fails the sync with that reason. Anything else (unavailable,
// deadline) is retried like a down cluster (isUnreachable).

type Request = Parameters<ManifestSource['render']>[1];

/** Argo CD: a source with a ref and neither path nor chart only lends its files to other sources. */
function isRefOnly(src: ApplicationSource): boolean {
  return Boolean(src.ref) && !src.path && !src.chart;
}

export function repoManifests(options: {
  address: string;
  /** The sync service's identity towards repo: mutual TLS and its token. */
  identity: ServiceClient;
}): ManifestSource & { close(): void } {
  const client = new repov1.RepoServiceClient(options.address, options.identity.credentials);
  const call = <Req, Res>(method: UnaryMethod<Req, Res>, req: Req, src: ApplicationSource): Promise<Res> =>
    fromPeer('repo', () =>
      unary(method, req, { metadata: options.identity.metadata(), timeoutMs: 120_000 }),
    ).catch((err: unknown) => {
      if (err instanceof CapstanError && !err.retryable)
        throw new ManifestSourceError(`repo service: ${src.repoURL} ${src.path ?? ''}: ${err.message}`);
      throw err;
    });
  const applicationRef = (app: Application) => ({
    name: app.metadata.name,
    namespace: app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
    project: app.spec.project,
  });
  const generate = async (
    app: Application,
    src: ApplicationSource,
    targetRevision: string,
    refSources: repov1.RefSource[],
  ): Promise<repov1.GenerateManifestsResponse> =>
    call(
      client.generateManifests.bind(client),
      {
        source: {
          repoUrl: src.repoURL,
          targetRevision,
          path: src.path ?? '.',
          chart: src.chart ?? '',
          ...sourceOptionsMessage(app, src),
        },
        application: applicationRef(app),
        refSources,
      },
      src,
    );

  /** Every source's revision resolved first; the renders and `$ref/…` files read those commits. */
  const renderSources = async (app: Application, request: Request): Promise<RenderedManifests> => {
    const sources = applicationSources(app);
    const pinned = request.revisions?.length === sources.length ? request.revisions : undefined;
    const revisions = await Promise.all(
      sources.map(async (src, i) => {
        // A chart's version is its targetRevision, or the version a request pins (a rollback's, a
        // per-source sync's); there is no commit to resolve in a chart repository.
        if (src.chart) return pinned?.[i] || (src.targetRevision ?? '');
        const res = await call(
          client.resolveRevision.bind(client),
          {
            repoUrl: src.repoURL,
            revision: pinned?.[i] || src.targetRevision || 'HEAD',
            application: applicationRef(app),
          },
          src,
        );
        return res.sha;
      }),
    );
    const refSources = sources.flatMap((src, i) =>
      src.ref ? [{ name: src.ref, repoUrl: src.repoURL, targetRevision: revisions[i] ?? '' }] : [],
    );
    const objects: KubeObject[] = [];
    for (const [i, src] of sources.entries()) {
      if (isRefOnly(src)) continue;
      const res = await generate(app, src, revisions[i] ?? '', refSources);
      for (const doc of res.manifests) objects.push(JSON.parse(doc) as KubeObject);
    }
    return { revision: revisions[0] ?? null, revisions, objects };
  };

  return {
    async render(app, request) {
      const sources = applicationSources(app);
      if (sources.length === 0)
        throw new ManifestSourceError(`Application ${app.metadata.name} has no source`);
      if (hasMultipleSources(app)) return renderSources(app, request);
      const src = sources[0] as ApplicationSource;
      // A requested revision (e.g. the SHA an automated sync was triggered by) wins; a chart's
      // version is its targetRevision (a requested revision names a commit).
      const revision = src.chart
        ? (src.targetRevision ?? '')
        : (request.revision ?? src.targetRevision ?? 'HEAD');
      const res = await generate(app, src, revision, []);
      return { revision: res.revision, objects: res.manifests.map((doc) => JSON.parse(doc) as KubeObject) };
    },
    close: () => client.close(),
  };
}
