// The project form's fields as text (one entry a line, Argo CD's CLI spellings: server,namespace and
// server,namespace,serviceAccount) and back into an AppProject spec. Editing keeps every spec field
// the form does not show (roles, sync windows, blacklists…) as stored.
import { lines } from '../forms/violations';
import type { Project } from './chain';

export interface ProjectDraft {
  name: string;
  description: string;
  parentProject: string;
  sourceRepos: string;
  destinations: string;
  serviceAccounts: string;
  clusterResources: string;
}

/** The api path of each form field (where its violations are placed). */
export const PROJECT_FIELDS = {
  name: 'metadata.name',
  description: 'spec.description',
  parentProject: 'spec.parentProject',
  sourceRepos: 'spec.sourceRepos',
  destinations: 'spec.destinations',
  serviceAccounts: 'spec.destinationServiceAccounts',
  clusterResources: 'spec.clusterResourceWhitelist',
} as const satisfies Record<keyof ProjectDraft, string>;

const cells = (line: string) => line.split(',').map((c) => c.trim());

export function draftOf(p?: Project): ProjectDraft {
  const s = p?.spec ?? {};
  return {
    name: p?.metadata.name ?? '',
    description: s.description ?? '',
    parentProject: s.parentProject ?? '',
    sourceRepos: (s.sourceRepos ?? []).join('\n'),
    destinations: (s.destinations ?? [])
      .map((d) => `${d.server || d.name || ''},${d.namespace ?? ''}`)
      .join('\n'),
    serviceAccounts: (s.destinationServiceAccounts ?? [])
      .map((d) => `${d.server ?? ''},${d.namespace ?? ''},${d.defaultServiceAccount ?? ''}`)
      .join('\n'),
    clusterResources: (s.clusterResourceWhitelist ?? [])
      .map((g) => `${g.group ?? ''},${g.kind ?? ''}`)
      .join('\n'),
  };
}

/** The manifest to send: the stored project (when editing) with the form's fields in place. */
export function projectOf(d: ProjectDraft, stored?: Project) {
  const spec: Record<string, unknown> = { ...(stored?.spec ?? {}) };
  const set = (key: string, value: unknown, keep: boolean) => {
    if (keep) spec[key] = value;
    else delete spec[key];
  };
  set('description', d.description.trim(), d.description.trim() !== '');
  set('parentProject', d.parentProject.trim(), d.parentProject.trim() !== '');
  spec.sourceRepos = lines(d.sourceRepos);
  spec.destinations = lines(d.destinations).map((l) => {
    const [where = '', namespace = ''] = cells(l);
    return where.includes('://') ? { server: where, namespace } : { name: where, namespace };
  });
  spec.destinationServiceAccounts = lines(d.serviceAccounts).map((l) => {
    const [server = '', namespace = '', defaultServiceAccount = ''] = cells(l);
    return { server, namespace, defaultServiceAccount };
  });
  const kinds = lines(d.clusterResources).map((l) => {
    const [group = '', kind = ''] = cells(l);
    return { group, kind };
  });
  set(
    'clusterResourceWhitelist',
    kinds,
    kinds.length > 0 || stored?.spec.clusterResourceWhitelist !== undefined,
  );
  const metadata: Record<string, unknown> = { name: stored?.metadata.name ?? d.name.trim() };
  if (stored?.metadata.resourceVersion) metadata.resourceVersion = stored.metadata.resourceVersion;
  return { metadata, spec };
}
