// The RepoService gRPC handlers: authenticate the calling service, check the method is allowed for
// it, translate messages to the use cases and back. No response carries a secret.
import type { handleUnaryCall } from '@grpc/grpc-js';
import type { apiv1, repov1 } from '@capstan/proto';
import { ValidationError, type EffectiveSetting, type Logger } from '@capstan/service';
import type { CheckoutStore } from '../checkouts/checkout-store.js';
import type { CredentialInput, CredentialMetadata } from '../credentials/credential.js';
import type { CredentialService, LookupResult } from '../credentials/credential-service.js';
import type { ManifestGenerator } from '../manifests/manifest-generator.js';
import type { RepoListing } from '../manifests/repo-listing.js';
import { inServerSpan, toServiceError, type ServiceAuthenticator } from '@capstan/service-identity';
import { authenticateRepoCall, type CallerIdentity } from './service-identity.js';
import type { RepoMetrics } from '../observability/repo-metrics.js';
import { FULL_SHA } from '../checkouts/revision.js';
import { validateRepoUrl } from '../credentials/repo-url.js';
import { chartRepoUrl, chartSourceIssues } from '@capstan/policy';
import { sourceOptionsOf } from './source-options.js';
import { refSourcesOf, usedRefs, type RefSource } from './ref-sources.js';
import type { RefSourceCheckout } from '../manifests/manifest-generator.js';

export interface RepoRpcDeps {
  auth: ServiceAuthenticator;
  credentials: CredentialService;
  checkouts: CheckoutStore;
  generator: ManifestGenerator;
  listing: RepoListing;
  /** Remembers a rendered/resolved source for change detection (best effort). */
  watch: (key: { repoURL: string; revision: string; project: string }) => Promise<void>;
  logger: Logger;
  metrics?: RepoMetrics;
  /** This service's effective settings (`capstan admin settings`). */
  effectiveSettings: (showSource: boolean) => EffectiveSetting[];
}

function toCredential(c: CredentialMetadata): repov1.Credential {
  return {
    id: c.id,
    name: c.name,
    repo: c.url,
    project: c.project,
    type: c.type,
    displayName: c.displayName,
    username: c.username,
    hasPassword: c.hasPassword,
    hasSshPrivateKey: c.hasSshPrivateKey,
    insecure: c.insecure,
    enableOci: c.enableOci,
    insecureOciForceHttp: c.insecureOciForceHttp,
    origin: c.origin,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

function toInput(i: repov1.CredentialInput | undefined): CredentialInput {
  if (!i) throw new ValidationError([{ field: 'credential', description: 'is required' }]);
  const type = i.type || 'git';
  return {
    url: i.repo,
    project: i.project,
    type: type as CredentialInput['type'],
    displayName: i.displayName,
    username: i.username,
    insecure: i.insecure,
    enableOci: i.enableOci,
    insecureOciForceHttp: i.insecureOciForceHttp,
    secret: {
      ...(i.password ? { password: i.password } : {}),
      ...(i.sshPrivateKey ? { sshPrivateKey: i.sshPrivateKey } : {}),
    },
  };
}

function applicationOf(app: repov1.ApplicationRef | undefined): {
  project: string;
  application: string | null;
} {
  return {
    project: app?.project ?? '',
    application: app?.name ? `${app.namespace || 'argocd'}/${app.name}` : null,
  };
}

function required(value: string | undefined, field: string): string {
  if (!value) throw new ValidationError([{ field, description: 'is required' }]);
  return value;
}

/**
 * A repository URL a checkout will fetch: required, and refused when it carries a password (it
 * would reach git's argv) or is not an http(s)/ssh URL.
 */
function repoUrl(value: string | undefined, field: string): string {
  return validateRepoUrl(required(value, field), field);
}

type Unary = <Req, Res>(
  method: string,
  fn: (req: Req, caller: CallerIdentity) => Promise<Res>,
) => handleUnaryCall<Req, Res>;

/** Every method: the caller authenticated (service identity), the answer or the one error mapping. */
function unaryFor(deps: RepoRpcDeps): Unary {
  return (method, fn) => (call, callback) => {
    Promise.resolve()
      .then(() => authenticateRepoCall(deps.auth, call, method))
      .then((caller) => inServerSpan('repo', method, call.metadata, () => fn(call.request, caller)))
      .then(
        (res) => callback(null, res),
        (err: unknown) => callback(toServiceError(err, deps.logger, method)),
      );
  };
}

export function repoServiceImplementation(deps: RepoRpcDeps): repov1.RepoServiceServer {
  const unary = unaryFor(deps);
  return {
    ...credentialMethods(deps, unary),
    ...contentMethods(deps, unary),
    settings: unary('settings', async (req: apiv1.GetSettingsRequest) => ({
      settings: deps.effectiveSettings(req.showSource),
    })),
  };
}

/** The credentials of each project: create, update, get, list, delete, apply a repository Secret. */
function credentialMethods(deps: RepoRpcDeps, unary: Unary) {
  return {
    createCredential: unary('createCredential', async (req: repov1.CreateCredentialRequest, caller) => ({
      credential: toCredential(
        await deps.credentials.create(toInput(req.credential), caller, { upsert: req.upsert }),
      ),
    })),
    updateCredential: unary('updateCredential', async (req: repov1.UpdateCredentialRequest, caller) => ({
      credential: toCredential(await deps.credentials.update(toInput(req.credential), caller)),
    })),
    getCredential: unary('getCredential', async (req: repov1.GetCredentialRequest, caller) => ({
      credential: toCredential(await deps.credentials.get(required(req.repo, 'repo'), req.project, caller)),
    })),
    listCredentials: unary('listCredentials', async (req: repov1.ListCredentialsRequest, caller) => ({
      credentials: (await deps.credentials.list(req.project, caller)).map(toCredential),
    })),
    deleteCredential: unary('deleteCredential', async (req: repov1.DeleteCredentialRequest, caller) => ({
      credential: toCredential(
        await deps.credentials.delete(required(req.repo, 'repo'), req.project, caller),
      ),
    })),
    applyCredentialSecret: unary(
      'applyCredentialSecret',
      async (req: repov1.ApplyCredentialSecretRequest, caller) => {
        let manifest: unknown;
        try {
          manifest = JSON.parse(req.manifestJson);
        } catch {
          throw new ValidationError([{ field: 'manifestJson', description: 'is not valid JSON' }]);
        }
        const result = await deps.credentials.applySecret(manifest, caller, {
          dryRun: req.dryRun,
          ...(req.expectedId !== undefined ? { expectedId: req.expectedId } : {}),
        });
        return {
          ...(result.credential ? { credential: toCredential(result.credential) } : {}),
          outcome: result.outcome,
        };
      },
    ),
  };
}

/**
 * What is read from a repository for an Application (revisions, manifests, listings): always with the
 * credential selected for its project, the decision audited.
 */
function contentMethods(deps: RepoRpcDeps, unary: Unary) {
  /**
   * Selects the credential for the Application's project and runs `work` with it while the
   * decision's audit row is written; answers only once both are done.
   */
  const withCredential = async <T>(
    repoURL: string,
    app: repov1.ApplicationRef | undefined,
    caller: CallerIdentity,
    work: (lookup: LookupResult, project: string) => Promise<T>,
  ): Promise<T> => {
    const { project, application } = applicationOf(app);
    const lookup = await deps.credentials.lookupForApplication(
      { url: repoURL, project, application },
      caller,
    );
    deps.metrics?.credentialLookup(lookup.reason);
    const [result, recorded] = await Promise.allSettled([work(lookup, project), lookup.recorded]);
    if (recorded.status === 'rejected') throw recorded.reason;
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  };
  /** withCredential for the ref sources a render reads, each selected (and audited) on its own. */
  const withRefCredentials = async <T>(
    used: readonly RefSource[],
    app: repov1.ApplicationRef | undefined,
    caller: CallerIdentity,
    work: (refs: RefSourceCheckout[]) => Promise<T>,
  ): Promise<T> => {
    const { project, application } = applicationOf(app);
    const lookups = await Promise.all(
      used.map((r) =>
        deps.credentials.lookupForApplication({ url: r.repoURL, project, application }, caller),
      ),
    );
    for (const l of lookups) deps.metrics?.credentialLookup(l.reason);
    const refs = used.map((r, i) => ({ ...r, credential: lookups[i]?.credential ?? null }));
    const [result, ...recorded] = await Promise.allSettled([work(refs), ...lookups.map((l) => l.recorded)]);
    for (const r of recorded) if (r.status === 'rejected') throw r.reason;
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  };
  /** A chart dependency's repository: the project's credential for it, selected and audited alike. */
  const dependencyCredential = async (
    url: string,
    app: repov1.ApplicationRef | undefined,
    caller: CallerIdentity,
  ) => {
    const { project, application } = applicationOf(app);
    const lookup = await deps.credentials.lookupForApplication({ url, project, application }, caller);
    deps.metrics?.credentialLookup(lookup.reason);
    await lookup.recorded;
    return lookup.credential;
  };
  const remember = (key: { repoURL: string; revision: string; project: string }) => {
    // A commit SHA never moves: nothing to watch (syncs of a pinned or announced commit pass one).
    if (FULL_SHA.test(key.revision)) return;
    deps
      .watch(key)
      .catch((err: unknown) => deps.logger.warn({ err, repoURL: key.repoURL }, 'cannot record watch'));
  };

  /**
   * A chart source: the credential is selected for the chart repository's URL as for a git one (one
   * selection, one audit row); charts are not watched (no commits to poll), the git ref sources its
   * value files read ($ref/…) are, as for a git source.
   */
  const generateChart = async (req: repov1.GenerateManifestsRequest, caller: CallerIdentity) => {
    const source = req.source!;
    const app = req.application;
    const url = chartRepoUrl(required(source.repoUrl, 'source.repoUrl'));
    const issues = chartSourceIssues({ ...source, repoURL: url }, 'source').map((i) => ({
      field: i.path.replace(/\.repoURL$/, '.repoUrl'),
      description: i.message,
    }));
    if (issues.length > 0) throw new ValidationError(issues);
    validateRepoUrl(url, 'source.repoUrl', { allowOci: true });
    const refSources = refSourcesOf(req.refSources);
    const options = sourceOptionsOf({ ...source, path: '.' }, refSources.length > 0 ? refSources : undefined);
    if (options.helm && !options.helm.releaseName && app?.name)
      options.helm = { ...options.helm, releaseName: app.name };
    const used = usedRefs(refSources, options.helm);
    return withRefCredentials(used, app, caller, (refs) =>
      withCredential(url, app, caller, async (lookup, project) => {
        const out = await deps.generator.generate(
          { repoURL: url, targetRevision: source.targetRevision, path: '', chart: source.chart, ...options },
          lookup.credential,
          refs,
        );
        for (const r of refs) remember({ repoURL: r.repoURL, revision: r.targetRevision || 'HEAD', project });
        return { revision: out.revision, sourceType: out.sourceType, manifests: [...out.manifests] };
      }),
    );
  };

  return {
    lookupCredential: unary('lookupCredential', async (req: repov1.LookupCredentialRequest, caller) =>
      withCredential(required(req.repoUrl, 'repoUrl'), req.application, caller, async (lookup) => {
        const name = lookup.credentialId ? ((await deps.credentials.nameOf(lookup.credentialId)) ?? '') : '';
        return { credentialId: lookup.credentialId ?? '', credentialName: name, reason: lookup.reason };
      }),
    ),
    resolveRevision: unary('resolveRevision', async (req: repov1.ResolveRevisionRequest, caller) => {
      const url = repoUrl(req.repoUrl, 'repoUrl');
      return withCredential(url, req.application, caller, async (lookup, project) => {
        const sha = await deps.checkouts.resolveRevision({
          url,
          revision: req.revision,
          credential: lookup.credential,
        });
        remember({ repoURL: url, revision: req.revision || 'HEAD', project });
        return { sha };
      });
    }),
    generateManifests: unary('generateManifests', async (req: repov1.GenerateManifestsRequest, caller) => {
      const source = req.source;
      if (source?.chart) return generateChart(req, caller);
      const url = repoUrl(source?.repoUrl, 'source.repoUrl');
      const refSources = refSourcesOf(req.refSources);
      const options = sourceOptionsOf(source, refSources.length > 0 ? refSources : undefined);
      // Argo CD: a chart's release name is the Application's name unless the source names one.
      if (options.helm && !options.helm.releaseName && req.application?.name)
        options.helm = { ...options.helm, releaseName: req.application.name };
      // Each ref source the options read is checked out with the credential selected for the
      // Application's project: the same selection (and audit row) as the source's own.
      const used = usedRefs(refSources, options.helm);
      return withRefCredentials(used, req.application, caller, (refs) =>
        withCredential(url, req.application, caller, async (lookup, project) => {
          const out = await deps.generator.generate(
            {
              repoURL: url,
              targetRevision: source?.targetRevision ?? '',
              path: source?.path ?? '',
              ...options,
            },
            lookup.credential,
            refs,
            (depUrl) => dependencyCredential(depUrl, req.application, caller),
          );
          remember({ repoURL: url, revision: source?.targetRevision || 'HEAD', project });
          for (const r of refs)
            remember({ repoURL: r.repoURL, revision: r.targetRevision || 'HEAD', project });
          return { revision: out.revision, sourceType: out.sourceType, manifests: [...out.manifests] };
        }),
      );
    }),
    listDirectories: unary('listDirectories', async (req: repov1.ListDirectoriesRequest, caller) => {
      const url = repoUrl(req.repoUrl, 'repoUrl');
      return withCredential(url, req.application, caller, (lookup) =>
        deps.listing.listDirectories({
          url,
          revision: req.revision,
          credential: lookup.credential,
          patterns: req.patterns,
        }),
      );
    }),
    listFiles: unary('listFiles', async (req: repov1.ListFilesRequest, caller) => {
      const url = repoUrl(req.repoUrl, 'repoUrl');
      return withCredential(url, req.application, caller, async (lookup) => {
        const out = await deps.listing.listFiles({
          url,
          revision: req.revision,
          credential: lookup.credential,
          patterns: req.patterns,
          withContent: req.withContent,
        });
        return {
          revision: out.revision,
          files: out.files.map((f) => ({ path: f.path, content: f.content ?? '' })),
        };
      });
    }),
  };
}
