// The principal of an Application that delivers objects from git: built when the api writes what
// the sync service hands over, and when the appset service calls back for an ApplicationSet that
// Application delivered (its delegation names `application:<namespace>/<name>`). The Application
// must exist; its grants are read from its project chain now.
import type { Kysely } from 'kysely';
import { UnauthenticatedError } from '@capstan/service';
import { ProjectChain, type AppRef, type AppProject } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import type { Principal } from '../auth/principal.js';
import { findApplication } from '../applications/application.repository.js';
import { listProjects } from '../projects/project.repository.js';
import { delivererName, type DelivererGrants } from './deliverer-rights.js';
import { deliveredBy, sameApp } from './tracking.js';

export class DeliveringApplications {
  constructor(private readonly db: Kysely<ApiDatabase>) {}

  async grants(ref: AppRef): Promise<DelivererGrants> {
    const stored = await findApplication(this.db, ref.namespace, ref.name);
    if (!stored || (stored.application.metadata as { deletionTimestamp?: string }).deletionTimestamp)
      throw new UnauthenticatedError(
        `application ${ref.namespace}/${ref.name} does not exist or is being deleted`,
      );
    const projects = new Map<string, AppProject>(
      (await listProjects(this.db)).map((p) => [p.project.metadata.name, p.project]),
    );
    const own = stored.project;
    const reach = new Set<string>();
    for (const [name, p] of projects) {
      const chain = ProjectChain.resolve(name, (n) => projects.get(n));
      if ((chain.ok && chain.chain.names.includes(own)) || sameApp(deliveredBy(p.metadata), ref))
        reach.add(name);
    }
    const chain = ProjectChain.resolve(own, (n) => projects.get(n));
    return {
      app: ref,
      project: own,
      projects: reach,
      permitsSource: (url) => chain.ok && chain.chain.permitsSource(url).allowed,
    };
  }

  /** The delivering Application as a caller, `via` the service that acts for it. */
  async principal(ref: AppRef, via: string, delegation?: Principal['delegation']): Promise<Principal> {
    return {
      name: delivererName(ref),
      groups: [],
      kind: 'user',
      via,
      deliverer: await this.grants(ref),
      ...(delegation ? { delegation } : {}),
    };
  }
}
