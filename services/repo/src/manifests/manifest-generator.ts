// Manifest generation for an application source: check out the revision with the credential
// selected for the project, refuse repositories with out-of-bounds symlinks, pick the source type
// (kustomize, Helm chart, plain directory) and render. Results are cached by (credential actually
// used + URL, commit, path, options); the cache never spans credentials.
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { CheckoutCredential, CheckoutStore } from '../checkouts/checkout-store.js';
import { redactRepoUrl } from '../credentials/repo-url.js';
import { renderDirectory, type DirectoryOptions } from './directory-source.js';
import { isHelmChart, renderHelm, type RefCheckout } from './helm-source.js';
import type { ChartStore } from '../charts/chart-store.js';
import { withDependencies, type DependencyCredentials } from '../charts/chart-dependencies.js';
import {
  chartVersionConstraint,
  canonicalDigest,
  type DirectorySource,
  type HelmSource,
  type KustomizeSource,
} from '@capstan/policy';
import { isKustomization, renderKustomize } from './kustomize-source.js';
import type { KustomizeVersion } from './render-tools.js';
import { LruMap } from './lru-map.js';
import type { RenderObserver } from '../observability/repo-metrics.js';
import { ManifestRenderError, PathEscapeError, ToolUnavailableError } from './manifest-errors.js';
import { findEscapingSymlinks, resolveAppDirectory } from './repo-path.js';

export interface ManifestSource {
  repoURL: string;
  targetRevision: string;
  path: string;
  /** Argo CD's spec.source.directory / .helm / .kustomize, already validated (rpc/source-options.ts). */
  directory?: DirectorySource;
  helm?: HelmSource;
  kustomize?: KustomizeSource;
  /** Argo CD's spec.source.chart: repoURL is a Helm repository or OCI registry, path is not read. */
  chart?: string;
}

/**
 * A ref source of a multi-source Application that the source's `$name/…` files read, with the
 * credential selected for the Application's project (rpc/repo-rpc.ts).
 */
export interface RefSourceCheckout {
  name: string;
  repoURL: string;
  targetRevision: string;
  credential: CheckoutCredential | null;
}

export type SourceType = 'directory' | 'kustomize' | 'helm';

export interface GeneratedManifests {
  /** The commit SHA the manifests were rendered from. */
  revision: string;
  sourceType: SourceType;
  /** One JSON document per Kubernetes object, in render order. */
  manifests: readonly string[];
}

export interface ManifestGeneratorOptions {
  kustomizePath: string;
  /** Operator's extra `kustomize build` arguments (Argo CD's kustomize.buildOptions). */
  kustomizeBuildOptions?: readonly string[];
  /** Named kustomize binaries for spec.source.kustomize.version (argocd-cm kustomize.path.<v>). */
  kustomizeVersions?: ReadonlyMap<string, KustomizeVersion>;
  /** capstan-jsonnet (obtain-jsonnet.sh), or null/absent when *.jsonnet files are refused. */
  jsonnetPath?: string | null;
  /** Helm binary, or null when Helm charts are not supported on this installation. */
  helmPath: string | null;
  scratchDir: string;
  renderTimeoutMs: number;
  cacheEntries: number;
  observer?: RenderObserver;
  /** Pulled charts of chart sources (null/absent when Helm is not configured). */
  charts?: ChartStore | null;
}

export class ManifestGenerator {
  private readonly cache: LruMap<string, GeneratedManifests>;
  private readonly escapes = new LruMap<string, string[]>(1024);

  constructor(
    private readonly checkouts: CheckoutStore,
    private readonly opts: ManifestGeneratorOptions,
  ) {
    this.cache = new LruMap(opts.cacheEntries);
  }

  /**
   * Forgets every rendered set: the operator's kustomize options (an applied argocd-cm) are not in
   * the cache key, so a change to them must not be answered from renders made before it.
   */
  forgetRendered(): void {
    this.cache.clear();
  }

  async generate(
    source: ManifestSource,
    credential: CheckoutCredential | null,
    refSources: readonly RefSourceCheckout[] = [],
    /** Credentials for chart dependencies' repositories (selected for the project); anonymous without. */
    dependencyCredentials: DependencyCredentials = async () => null,
  ): Promise<GeneratedManifests> {
    if (source.chart) return this.generateChart(source, source.chart, credential, refSources);
    const req = { url: source.repoURL, revision: source.targetRevision, credential };
    const sha = await this.checkouts.resolveRevision(req);
    const refs = await this.resolveRefs(refSources);
    const directory: DirectoryOptions = {
      recurse: source.directory?.recurse ?? false,
      include: source.directory?.include ?? '',
      exclude: source.directory?.exclude ?? '',
    };
    const helm: HelmSource = source.helm ?? {};
    const kustomize: KustomizeSource = source.kustomize ?? {};
    // Every option that changes the output is in the key, as a digest of its canonical JSON (key
    // order does not matter; inline values may be large and are not kept in the key).
    const cacheKey = JSON.stringify([
      this.checkouts.repoKeyOf(req),
      sha,
      path.posix.normalize(source.path || '.'),
      canonicalDigest({ directory: source.directory ?? {}, helm, kustomize }),
      // Each ref source read, by the credential used and the commit (never shared across credentials).
      refs.map((r) => [r.name, this.checkouts.repoKeyOf(r.req), r.sha]),
    ]);
    const hit = this.cache.get(cacheKey);
    this.opts.observer?.manifestCache(hit ? 'hit' : 'miss');
    if (hit) return hit;

    const checkout = await this.checkouts.checkout({ ...req, revision: sha });
    const leases: { release(): void }[] = [checkout];
    try {
      const refCheckouts = await this.checkoutRefs(refs, leases);
      const where = `repository ${redactRepoUrl(source.repoURL)} at revision ${source.targetRevision || 'HEAD'} (${sha.slice(0, 12)})`;
      const root = await realpath(checkout.dir);
      await this.refuseEscapingSymlinks(root, where);
      const appDir = await resolveAppDirectory(root, source.path, where);
      const what = `path ${source.path || '.'} of ${where}`;
      const renderStarted = performance.now();
      let sourceType: SourceType;
      let objects;
      let cacheable = true;
      if (await isKustomization(appDir)) {
        sourceType = 'kustomize';
        const named = kustomize.version ? this.opts.kustomizeVersions?.get(kustomize.version) : undefined;
        if (kustomize.version && !named)
          throw new ManifestRenderError(
            `${what}: kustomize version ${JSON.stringify(kustomize.version)} is not configured on this repo service (argocd-cm kustomize.path.${kustomize.version})`,
          );
        objects = await renderKustomize({
          kustomize: named?.path ?? this.opts.kustomizePath,
          root,
          appDir,
          options: kustomize,
          buildOptions: named?.buildOptions ?? this.opts.kustomizeBuildOptions ?? [],
          scratchHome: this.opts.scratchDir,
          timeoutMs: this.opts.renderTimeoutMs,
          what,
        });
      } else if (await isHelmChart(appDir)) {
        if (!this.opts.helmPath)
          throw new ToolUnavailableError(
            `${what} is a Helm chart, but Helm is not configured on this repo service`,
          );
        sourceType = 'helm';
        // Dependencies built with the project's credentials: such a rendering is not cached (its
        // key would have to name every dependency credential), so projects never share one.
        const built = this.opts.charts
          ? await withDependencies({
              runner: this.opts.charts.runner,
              root,
              appDir,
              credentials: dependencyCredentials,
              passCredentials: Boolean(helm.passCredentials),
              what,
            })
          : null;
        cacheable = built === null;
        try {
          objects = await renderHelm({
            helm: this.opts.helmPath,
            root: built?.root ?? root,
            appDir: built?.appDir ?? appDir,
            options: helm,
            scratchHome: this.opts.scratchDir,
            timeoutMs: this.opts.renderTimeoutMs,
            what,
            ...(refSources.length > 0 ? { refs: refCheckouts } : {}),
          });
        } finally {
          await built?.remove();
        }
      } else {
        sourceType = 'directory';
        objects = await renderDirectory(root, appDir, directory, {
          runner: {
            binary: this.opts.jsonnetPath ?? null,
            scratchHome: this.opts.scratchDir,
            timeoutMs: this.opts.renderTimeoutMs,
          },
          options: source.directory?.jsonnet,
          what,
        });
      }
      this.opts.observer?.rendered(sourceType, (performance.now() - renderStarted) / 1000);
      const result: GeneratedManifests = Object.freeze({
        revision: sha,
        sourceType,
        manifests: Object.freeze(objects.map((o) => JSON.stringify(o))),
      });
      if (cacheable) this.cache.set(cacheKey, result);
      return result;
    } finally {
      for (const lease of leases) lease.release();
    }
  }

  /**
   * A chart of a Helm repository or OCI registry: pulled (or reused) for the credential selected,
   * then `helm template` with the source's options, exactly as a chart in git. The revision is
   * the chart version pulled, as in Argo CD.
   */
  private async generateChart(
    source: ManifestSource,
    chart: string,
    credential: CheckoutCredential | null,
    refSources: readonly RefSourceCheckout[],
  ): Promise<GeneratedManifests> {
    const what = `chart ${chart} of ${redactRepoUrl(source.repoURL)}`;
    if (!this.opts.helmPath || !this.opts.charts)
      throw new ToolUnavailableError(`${what}: Helm is not configured on this repo service`);
    const helm: HelmSource = source.helm ?? {};
    const pulled = await this.opts.charts.pull({
      url: source.repoURL,
      chart,
      version: chartVersionConstraint(source.targetRevision),
      credential,
      passCredentials: Boolean(helm.passCredentials),
      what,
    });
    const leases: { release(): void }[] = [pulled];
    try {
      // Value files from git sources ($ref/…), Argo's usual multi-source shape: a chart from a Helm
      // repository with the environment's values kept in git.
      const refs = await this.resolveRefs(refSources);
      const cacheKey = JSON.stringify([
        pulled.key,
        canonicalDigest({ helm }),
        refs.map((r) => [r.name, this.checkouts.repoKeyOf(r.req), r.sha]),
      ]);
      const hit = this.cache.get(cacheKey);
      this.opts.observer?.manifestCache(hit ? 'hit' : 'miss');
      if (hit) return hit;
      const refCheckouts = await this.checkoutRefs(refs, leases);
      const renderStarted = performance.now();
      const objects = await renderHelm({
        helm: this.opts.helmPath,
        root: pulled.dir,
        appDir: pulled.dir,
        options: helm,
        scratchHome: this.opts.scratchDir,
        timeoutMs: this.opts.renderTimeoutMs,
        what: `${what} ${pulled.version}`,
        ...(refs.length > 0 ? { refs: refCheckouts } : {}),
      });
      this.opts.observer?.rendered('helm', (performance.now() - renderStarted) / 1000);
      const result: GeneratedManifests = Object.freeze({
        revision: pulled.version,
        sourceType: 'helm' as const,
        manifests: Object.freeze(objects.map((o) => JSON.stringify(o))),
      });
      this.cache.set(cacheKey, result);
      return result;
    } finally {
      for (const lease of leases) lease.release();
    }
  }

  /** Each ref source's commit, resolved with its own credential (part of every cache key). */
  private resolveRefs(refSources: readonly RefSourceCheckout[]) {
    return Promise.all(
      refSources.map(async (r) => {
        const req = { url: r.repoURL, revision: r.targetRevision, credential: r.credential };
        return { ...r, req, sha: await this.checkouts.resolveRevision(req) };
      }),
    );
  }

  /** Checks out each resolved ref source (leases added to `leases`), refusing escaping symlinks. */
  private async checkoutRefs(
    refs: Awaited<ReturnType<ManifestGenerator['resolveRefs']>>,
    leases: { release(): void }[],
  ): Promise<Map<string, RefCheckout>> {
    const checkouts = new Map<string, RefCheckout>();
    for (const r of refs) {
      const c = await this.checkouts.checkout({ ...r.req, revision: r.sha });
      leases.push(c);
      const where = `repository ${redactRepoUrl(r.repoURL)} of $${r.name} at revision ${r.targetRevision || 'HEAD'} (${r.sha.slice(0, 12)})`;
      const root = await realpath(c.dir);
      await this.refuseEscapingSymlinks(root, where);
      checkouts.set(r.name, { root, what: where });
    }
    return checkouts;
  }

  private async refuseEscapingSymlinks(root: string, where: string): Promise<void> {
    let found = this.escapes.get(root);
    if (!found) {
      found = await findEscapingSymlinks(root);
      this.escapes.set(root, found);
    }
    if (found.length > 0) {
      throw new PathEscapeError(
        `${where} contains symbolic links pointing outside the repository: ${found.slice(0, 5).join(', ')}`,
      );
    }
  }
}
