// Whether a set's inputs changed since its last successful reconcile, so a background reconcile can
// skip regenerating (the engine's render is most of a no-op reconcile's cost). A generation is a
// function of: the set's manifest, the engine's code and limits, the commits its git generators read
// (each repository and revision, as resolved for the owner with the owner's credential project), the
// cluster registry as the owner sees it, and the owner. The fingerprint is a digest of exactly these;
// checking it resolves the same revisions and lists the clusters again (cheap calls, no rendering),
// after the same pre-generate check a generation makes, so a push the events did not announce, a
// cluster change or an owner who lost a right are still seen. Templates calling a Go function whose
// result changes by itself (now, rand…, uuidv4, gen… keys and certificates) are never skipped.
import type { Limits } from '@capstan/appset-engine';
import type { ResolvedRevision } from '../peers/repo-git.js';
import { canonicalJson, sha256, type StoredAppSet, type ValidatedAppSet } from '../sets/manifest.js';
import {
  checkedReads,
  credentialProject,
  type Acting,
  type GenerationDeps,
  type Observed,
} from '../flows/generation.js';

/** What is kept of a successful reconcile: its fingerprint, and what to observe again to check it. */
export interface ReconciledInputs {
  fingerprint: string;
  repos: { repoURL: string; revision: string }[];
  readsClusters: boolean;
}

export interface FingerprintParts {
  manifest: StoredAppSet;
  engine: string;
  limits: Partial<Limits>;
  owner: string;
  observed: Observed;
}

const byRepo = (a: ResolvedRevision, b: ResolvedRevision) => {
  const ka = `${a.repoURL}\n${a.revision}`;
  const kb = `${b.repoURL}\n${b.revision}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

/** The digest of everything a generation depends on (the order and repetition of its reads irrelevant). */
export function fingerprintOf(p: FingerprintParts): string {
  return sha256(
    canonicalJson({
      manifest: p.manifest,
      engine: p.engine,
      limits: p.limits,
      owner: p.owner,
      revisions: [
        ...new Map(p.observed.revisions.map((r) => [`${r.repoURL}\n${r.revision}\n${r.sha}`, r])).values(),
      ].sort(byRepo),
      // In the api's order: the generator's output may depend on it.
      clusters: p.observed.clusters,
    }),
  );
}

export function reconciledInputs(p: FingerprintParts): ReconciledInputs {
  const repos = new Map(p.observed.revisions.map((r) => [`${r.repoURL}\n${r.revision}`, r]));
  return {
    fingerprint: fingerprintOf(p),
    repos: [...repos.values()].sort(byRepo).map((r) => ({ repoURL: r.repoURL, revision: r.revision })),
    readsClusters: p.observed.clusters !== null,
  };
}

/** Go (sprig) functions whose result changes from one call to the next with the same arguments. */
const CHANGING_FUNCTIONS =
  /(?<![.$\w])(now|ago|date\w*|unixEpoch|duration\w*|rand\w*|uuidv4|shuffle|gen\w+|bcrypt|htpasswd|encryptAES|getHostByName|env|expandenv)\b/;

/** Whether equal inputs give an equal generation (false when a Go template may call a changing function). */
export function rendersDeterministically(set: StoredAppSet): boolean {
  const spec = (set as { spec?: { goTemplate?: unknown } }).spec;
  if (spec?.goTemplate !== true) return true;
  const text = JSON.stringify(set);
  for (const action of text.matchAll(/\{\{([\s\S]*?)\}\}/g))
    if (CHANGING_FUNCTIONS.test(action[1]!)) return false;
  return true;
}

/**
 * Whether a generation now, for `acting` as `owner`, would have the fingerprint `recorded`: the
 * pre-generate check passes, every recorded repository and revision resolves to the same commit,
 * and the cluster registry (when read) lists the same clusters. Anything failing or refused is
 * "changed": the full generation then runs and reports it as it always does.
 */
export async function inputsUnchanged(
  deps: GenerationDeps,
  v: ValidatedAppSet,
  acting: Acting,
  owner: string,
  recorded: ReconciledInputs,
): Promise<boolean> {
  if (!rendersDeterministically(v.stored)) return false;
  try {
    const { beforeRead } = await checkedReads(deps, v, acting);
    const access = { delegation: acting.repo, project: credentialProject(v) };
    const [revisions, clusters] = await Promise.all([
      Promise.all(
        recorded.repos.map(async (r) => {
          await beforeRead(r.repoURL);
          return { ...r, sha: await deps.repo.resolveRevision(access, r.repoURL, r.revision) };
        }),
      ),
      recorded.readsClusters ? deps.api.listClusters(acting.api) : null,
    ]);
    const current = fingerprintOf({
      manifest: v.stored,
      engine: deps.engine.identity,
      limits: deps.limits,
      owner,
      observed: { revisions, clusters },
    });
    return current === recorded.fingerprint;
  } catch {
    return false;
  }
}
