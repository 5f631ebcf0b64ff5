// Which Applications a new revision concerns (pure): those reading that repository at that
// revision (targetRevision, HEAD and empty being the same), whose project resolved it (a revision
// resolved with another project's credential is not theirs; '' = unscoped credential). The
// reconciler refreshes their desired state at once; automation then syncs those that are automated.
import { applicationSources, normalizeRepoUrl, type Application } from '@capstan/policy';

export interface RevisionChange {
  repoURL: string;
  revision: string;
  project: string;
  sha: string;
}

const sameRevision = (a: string | undefined, b: string) => (a || 'HEAD') === (b || 'HEAD');

export function readsRevision(app: Application, change: RevisionChange): boolean {
  if (change.project !== '' && change.project !== app.spec.project) return false;
  const url = normalizeRepoUrl(change.repoURL);
  return applicationSources(app).some(
    (s) => normalizeRepoUrl(s.repoURL) === url && sameRevision(s.targetRevision, change.revision),
  );
}
