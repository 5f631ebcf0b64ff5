// One generation of a set for someone (the caller, or the set's owner in a reconcile), the order
// proposal 003 asks for: the api's pre-generate check (repositories, clusters, the right to create
// some Application), then the engine with providers that act for that same person (a repository a
// templated git generator reaches only while generating is checked before it is read), then the
// api's dry-run verdict on every generated Application.
import {
  AppSetError,
  generatorInputs,
  type ClusterInfo,
  type GenerateResult,
  type Limits,
} from '@capstan/appset-engine';
import { normalizeRepoUrl, type Application } from '@capstan/policy';
import { CapstanError, PermissionDeniedError } from '@capstan/service';
import type { ApiPeer, ApplyRequest, Verdict } from '../peers/api-peer.js';
import type { RepoPeer, ResolvedRevision } from '../peers/repo-git.js';
import type { Generator } from './engine-pool.js';
import { canonicalJson, setKey, sha256, type ValidatedAppSet } from '../sets/manifest.js';
import { applyPolicy } from '../sets/sync-policy.js';

export interface GenerationDeps {
  engine: Generator;
  api: ApiPeer;
  repo: RepoPeer;
  limits: Partial<Limits>;
}

/** The delegations one generation acts with (audience api, audience repo). */
export interface Acting {
  api: string;
  repo: string;
}

export interface Generated {
  result: GenerateResult;
  applicationsJson: string[];
  /** Identifies what was generated and how it is applied: equal digests, nothing to write. */
  digest: string;
  /** Normalised URLs of every repository read (templated ones included). */
  gitRepos: string[];
  /** What the generation read that can change without the set changing (reconcile/inputs.ts). */
  observed: Observed;
}

/** The revisions a generation resolved, and the cluster registry as it listed it (null: not read). */
export interface Observed {
  revisions: ResolvedRevision[];
  clusters: ClusterInfo[] | null;
}

/** The project whose repository credentials the git generators use: the template's, when literal. */
export function credentialProject(v: ValidatedAppSet): string {
  const project = (v.parsed.spec.template.spec as { project?: unknown } | undefined)?.project;
  return typeof project === 'string' && !project.includes('{{') ? project : '';
}

/** The literal repositories and cluster use known before generating (the triggers use them too). */
export function declaredInputs(v: ValidatedAppSet): { gitRepos: string[]; readsClusters: boolean } {
  const inputs = generatorInputs(v.parsed);
  return {
    gitRepos: [...new Set(inputs.repos.filter((r) => !r.templated).map((r) => normalizeRepoUrl(r.repoURL)))],
    readsClusters: inputs.clusters.length > 0,
  };
}

/**
 * The api's pre-generate check for `acting` (repositories, clusters, the right to create some
 * Application; refused: PermissionDeniedError), and the guard to run before reading any further
 * repository (one a templated git generator reaches only while generating).
 */
export async function checkedReads(
  deps: GenerationDeps,
  v: ValidatedAppSet,
  acting: Acting,
): Promise<{ beforeRead: (repoURL: string) => Promise<void> }> {
  const applicationSet = setKey(v.stored.metadata);
  const inputs = generatorInputs(v.parsed);
  const literal = inputs.repos.filter((r) => !r.templated).map((r) => r.repoURL);
  const checked = new Set(literal.map(normalizeRepoUrl));
  const pre = await deps.api.checkInputs(acting.api, {
    applicationSet,
    repoUrls: [...new Set(literal)],
    readsClusters: inputs.clusters.length > 0,
  });
  if (!pre.allowed)
    throw new PermissionDeniedError(pre.reason || 'not allowed to generate this ApplicationSet');
  const beforeRead = async (repoURL: string) => {
    if (!acting.repo) throw new PermissionDeniedError('reading a repository needs a delegation for repo');
    const url = normalizeRepoUrl(repoURL);
    if (checked.has(url)) return;
    const res = await deps.api.checkInputs(acting.api, {
      applicationSet,
      repoUrls: [repoURL],
      readsClusters: false,
    });
    if (!res.allowed) throw new PermissionDeniedError(res.reason || `not allowed to read ${repoURL}`);
    checked.add(url);
  };
  return { beforeRead };
}

export async function generate(deps: GenerationDeps, v: ValidatedAppSet, acting: Acting): Promise<Generated> {
  const inputs = generatorInputs(v.parsed);
  const { beforeRead } = await checkedReads(deps, v, acting);
  const observed: Observed = { revisions: [], clusters: null };
  let result: GenerateResult;
  try {
    result = await deps.engine.generate({
      applicationSet: v.stored,
      limits: deps.limits,
      providers: {
        git: deps.repo.gitProvider({
          delegation: acting.repo,
          project: credentialProject(v),
          beforeRead,
          onResolved: (r) => observed.revisions.push(r),
        }),
        clusters: {
          listClusters: async () => (observed.clusters = await deps.api.listClusters(acting.api)),
        },
      },
    });
  } catch (err) {
    // A peer's refusal or outage inside a generator is that error, not a generator error.
    if (err instanceof AppSetError && err.cause instanceof CapstanError) throw err.cause;
    throw err;
  }
  const applicationsJson = result.applications.map((a) => JSON.stringify(a));
  const policy = applyPolicy(v.parsed);
  return {
    result,
    applicationsJson,
    digest: sha256(canonicalJson({ applications: result.applications, policy })),
    gitRepos: [
      ...new Set(
        [
          ...inputs.repos.filter((r) => !r.templated).map((r) => r.repoURL),
          ...result.reads.repos.map((r) => r.repoURL),
        ].map(normalizeRepoUrl),
      ),
    ],
    observed,
  };
}

/** The api's Apply request for what was generated (dry run or for real). */
export function applyRequest(v: ValidatedAppSet, g: Generated, dryRun: boolean): ApplyRequest {
  const policy = applyPolicy(v.parsed);
  return {
    applicationSet: setKey(v.stored.metadata),
    applicationsJson: g.applicationsJson,
    dryRun,
    allowUpdate: policy.allowUpdate,
    deleteMissing: policy.deleteMissing,
    deleteAll: false,
    preserveResources: policy.preserveResources,
  };
}

export const refusedVerdicts = (verdicts: readonly Verdict[]): Verdict[] =>
  verdicts.filter((x) => !x.allowed);

/** Each refused Application and the rule that refused it, in one message. */
export function refusalMessage(verdicts: readonly Verdict[]): string {
  const refused = refusedVerdicts(verdicts);
  return refused
    .map(
      (x) =>
        `application ${JSON.stringify(x.name)} (project ${JSON.stringify(x.project)}, ${x.action}): ${x.reason}`,
    )
    .join('; ');
}

/** The generated Applications with the caller's verdict on each (and owned ones only in verdicts). */
export function withVerdicts(
  applications: readonly Application[],
  verdicts: readonly Verdict[],
): {
  name: string;
  namespace: string;
  project: string;
  action: string;
  allowed: boolean;
  reason: string;
  applicationJson: string;
}[] {
  const generated = new Map(applications.map((a) => [a.metadata.name, a]));
  const out = verdicts.map((x) => ({
    name: x.name,
    namespace: x.namespace,
    project: x.project,
    action: x.action,
    allowed: x.allowed,
    reason: x.reason,
    applicationJson: generated.has(x.name) ? JSON.stringify(generated.get(x.name)) : '',
  }));
  const named = new Set(verdicts.map((x) => x.name));
  for (const a of applications)
    if (!named.has(a.metadata.name))
      out.push({
        name: a.metadata.name,
        namespace: a.metadata.namespace ?? '',
        project: a.spec.project,
        action: '',
        allowed: false,
        reason: 'no verdict from the api',
        applicationJson: JSON.stringify(a),
      });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
