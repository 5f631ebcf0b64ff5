// What an Application that delivers objects from git may do through the api when it acts as a
// caller (its ApplicationSets: the appset service calls back with a delegation naming it). Its
// rights come from its project, never from RBAC policy lines: Applications in its own project, in a
// project under it by parentProject, or in a project it delivered itself; repositories its project
// chain permits as sources. Everything else is denied (pure, no I/O; the grants are loaded when the
// principal is built).
import type { Decision } from '@capstan/rbac';
import type { AppRef } from '@capstan/policy';

export interface DelivererGrants {
  app: AppRef;
  /** The delivering Application's own project. */
  project: string;
  /** Projects whose Applications it may write: its own, those under it, those it delivered. */
  projects: ReadonlySet<string>;
  /** Whether its project chain permits `url` as a source repository. */
  permitsSource(url: string): boolean;
}

const APPLICATION_ACTIONS = new Set(['get', 'create', 'update', 'delete', 'sync']);

export const delivererName = (app: AppRef) => `application:${app.namespace}/${app.name}`;

/** `<namespace>/<name>` of a delegation subject `application:<namespace>/<name>`, else undefined. */
export function delivererRef(subject: string): AppRef | undefined {
  const m = /^application:([^/]+)\/([^/]+)$/.exec(subject);
  return m ? { namespace: m[1]!, name: m[2]! } : undefined;
}

/** The repository URL of a repositories object: `<url>` or `<project>/<url>`. */
function repositoryUrl(object: string): string {
  const scheme = object.indexOf('://');
  const slash = object.indexOf('/');
  return scheme > 0 && slash > scheme ? object : object.slice(slash + 1);
}

export function decideForDeliverer(
  g: DelivererGrants,
  resource: string,
  action: string,
  object: string,
): Decision {
  const who = `Application ${g.app.namespace}/${g.app.name} (project ${g.project})`;
  if (resource === 'applications' && APPLICATION_ACTIONS.has(action)) {
    const project = object.slice(0, object.indexOf('/'));
    return g.projects.has(project)
      ? {
          allowed: true,
          reason: `${who} delivers into project ${project}: its own, under it, or delivered by it`,
        }
      : { allowed: false, reason: `${who} may not deliver into project ${project || '*'}` };
  }
  if (resource === 'repositories' && action === 'get') {
    const url = repositoryUrl(object);
    return g.permitsSource(url)
      ? { allowed: true, reason: `${who}: its project chain permits the source repository` }
      : { allowed: false, reason: `${who}: its project chain does not permit source repository ${url}` };
  }
  return {
    allowed: false,
    reason: `${who} acts only on Applications and source repositories of its projects`,
  };
}
