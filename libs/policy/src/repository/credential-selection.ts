// Which credential applies: pure rules from the design ("Credential selection"), shared by the
// checkout path (lookup for an Application), the API's get/delete and the mutations. Candidates
// are in their stable creation order, so "first" is well defined.
import { sameRepoUrl } from './repo-url.js';

export interface Candidate {
  id: string;
  url: string;
  /** '' when unscoped. */
  project: string;
}

export type LookupReason = 'project-match' | 'unscoped-fallback' | 'none';

export interface LookupDecision<C extends Candidate> {
  chosen: C | null;
  reason: LookupReason;
  /** Every credential whose URL matched, in order. */
  considered: C[];
}

/**
 * Lookup for an Application of `project`: the first credential scoped to the project whose URL
 * matches, else the first unscoped credential for the URL, else none (anonymous). A credential
 * scoped to another project is never chosen.
 */
export function selectForProject<C extends Candidate>(
  candidates: readonly C[],
  url: string,
  project: string,
): LookupDecision<C> {
  const considered = candidates.filter((c) => sameRepoUrl(c.url, url));
  if (project !== '') {
    const scoped = considered.find((c) => c.project === project);
    if (scoped) return { chosen: scoped, reason: 'project-match', considered };
  }
  const unscoped = considered.find((c) => c.project === '');
  if (unscoped) return { chosen: unscoped, reason: 'unscoped-fallback', considered };
  return { chosen: null, reason: 'none', considered };
}

export type ApiResolution<C extends Candidate> =
  | { outcome: 'found'; credential: C; considered: C[] }
  | { outcome: 'not-found'; considered: C[] }
  | { outcome: 'ambiguous'; considered: C[] };

/**
 * Get and delete through the API: with no project, exactly one credential for the URL is returned
 * whatever its scope, and several are ambiguous (the caller must name the project); with a
 * project, only a credential of that project matches.
 */
export function resolveForApi<C extends Candidate>(
  candidates: readonly C[],
  url: string,
  project: string,
): ApiResolution<C> {
  const considered = candidates.filter((c) => sameRepoUrl(c.url, url));
  if (project !== '') {
    const match = considered.find((c) => c.project === project);
    return match ? { outcome: 'found', credential: match, considered } : { outcome: 'not-found', considered };
  }
  if (considered.length === 1) return { outcome: 'found', credential: considered[0] as C, considered };
  if (considered.length === 0) return { outcome: 'not-found', considered };
  return { outcome: 'ambiguous', considered };
}

/**
 * Mutations match strictly: the credential with this URL in exactly this scope ('' = unscoped),
 * so no update can touch another project's credential.
 */
export function findForMutation<C extends Candidate>(
  candidates: readonly C[],
  url: string,
  project: string,
): C | null {
  return candidates.find((c) => sameRepoUrl(c.url, url) && c.project === project) ?? null;
}
