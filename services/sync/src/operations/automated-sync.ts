// Automated sync: when the repo service reports that a watched source resolves to a new commit,
// every Application with syncPolicy.automated whose source is that repository and revision gets a
// sync request of its own. The operationId is derived from the event and the Application, so a
// redelivered event queues nothing twice.
import {
  applicationSources,
  DEFAULT_CONTROL_NAMESPACE,
  normalizeRepoUrl,
  type Application,
} from '@capstan/policy';

export interface RevisionChange {
  repoURL: string;
  revision: string;
  project: string;
  sha: string;
}

const sameRevision = (a: string | undefined, b: string) => (a || 'HEAD') === (b || 'HEAD');

/** The Applications a revision change should sync (pure). */
export function applicationsToSync(apps: readonly Application[], change: RevisionChange): Application[] {
  const url = normalizeRepoUrl(change.repoURL);
  return apps.filter((app) => {
    const automated = app.spec.syncPolicy?.automated;
    if (!automated || automated.enabled === false) return false;
    // An Application being deleted is never synced again (Argo CD's controller skips it too).
    if ((app.metadata as { deletionTimestamp?: unknown }).deletionTimestamp) return false;
    // The project whose credential resolved the revision must be this Application's ('' = unscoped).
    if (change.project !== '' && change.project !== app.spec.project) return false;
    return applicationSources(app).some(
      (s) => normalizeRepoUrl(s.repoURL) === url && sameRevision(s.targetRevision, change.revision),
    );
  });
}

export function automatedOperationId(eventId: string, app: Application): string {
  return `auto:${eventId}:${app.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE}/${app.metadata.name}`;
}
