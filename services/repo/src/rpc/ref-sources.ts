// The ref sources of a GenerateManifests request (Argo CD's multiple sources: another source of the
// Application whose files the source's `$name/path` value files read), checked at this edge like
// every other field: Argo CD's name rule, each name once, a URL git may fetch.
import type { repov1 } from '@capstan/proto';
import { REF_NAME, type HelmSource } from '@capstan/policy';
import { ValidationError } from '@capstan/service';
import { validateRepoUrl } from '../credentials/repo-url.js';

export interface RefSource {
  name: string;
  repoURL: string;
  targetRevision: string;
}

/** At most this many ref sources per request (Argo CD has no bound; an Application rarely has 3). */
export const MAX_REF_SOURCES = 20;

export function refSourcesOf(raw: readonly repov1.RefSource[] | undefined): RefSource[] {
  const list = raw ?? [];
  if (list.length > MAX_REF_SOURCES)
    throw new ValidationError([
      { field: 'refSources', description: `at most ${MAX_REF_SOURCES} ref sources` },
    ]);
  const seen = new Set<string>();
  return list.map((r, i) => {
    const at = `refSources[${i}]`;
    if (!REF_NAME.test(r.name))
      throw new ValidationError([
        {
          field: `${at}.name`,
          description: `sources.ref ${r.name} cannot contain any special characters except '_' and '-'`,
        },
      ]);
    if (seen.has(r.name))
      throw new ValidationError([
        { field: `${at}.name`, description: 'invalid sources: multiple sources had the same `ref` key' },
      ]);
    seen.add(r.name);
    return {
      name: r.name,
      repoURL: validateRepoUrl(r.repoUrl, `${at}.repoUrl`),
      targetRevision: r.targetRevision,
    };
  });
}

/** The ref sources the helm options' `$name/…` files name (only those are checked out). */
export function usedRefs(refs: readonly RefSource[], helm: HelmSource | undefined): RefSource[] {
  const files = [...(helm?.valueFiles ?? []), ...(helm?.fileParameters ?? []).map((p) => p.path)];
  const names = new Set(files.filter((f) => f.startsWith('$')).map((f) => f.slice(1).split('/')[0]));
  return refs.filter((r) => names.has(r.name));
}
