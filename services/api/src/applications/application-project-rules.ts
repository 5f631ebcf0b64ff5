// The project rules of every write of an Application, whoever makes it (a user, apply, an
// ApplicationSet, a delivering Application): its project chain resolves, and permits where the
// Application lives, its sources and its destination (the cluster by either of its names).
import type { Kysely } from 'kysely';
import type { FieldViolation } from '@capstan/service';
import {
  applicationSources,
  hasMultipleSources,
  ProjectChain,
  type Application,
  type AppProject,
} from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import type { PendingObjects } from '../support/write-options.js';
import { listProjects } from '../projects/project.repository.js';
import { findCluster } from '../clusters/cluster.repository.js';

/** Every project, by name: one read for checking many Applications (projectViolations' `projects`). */
export async function projectsByName(db: Kysely<ApiDatabase>): Promise<Map<string, AppProject>> {
  return new Map((await listProjects(db)).map((p) => [p.project.metadata.name, p.project]));
}

/**
 * What the project chain refuses of this Application, as field violations (none: permitted). The
 * check of every write of an Application, whoever makes it (a user, apply, an ApplicationSet).
 */
export async function projectViolations(
  db: Kysely<ApiDatabase>,
  control: string,
  app: Application,
  opts: { pending?: PendingObjects | undefined; projects?: Map<string, AppProject> } = {},
): Promise<FieldViolation[]> {
  const { pending } = opts;
  const projects = new Map(opts.projects ?? (await projectsByName(db)));
  for (const [name, p] of pending?.projects ?? []) projects.set(name, p);
  const resolved = ProjectChain.resolve(app.spec.project, (name) => projects.get(name));
  if (!resolved.ok) return [{ field: 'spec.project', description: resolved.reason }];
  const violations: FieldViolation[] = [];
  const inNamespace = resolved.chain.permitsApplicationNamespace(app.metadata.namespace ?? control, control);
  if (!inNamespace.allowed) violations.push({ field: 'metadata.namespace', description: inNamespace.reason });
  // The sources the Application renders (Argo CD's GetSources: an empty spec.sources means spec.source).
  const multi = hasMultipleSources(app);
  applicationSources(app).forEach((source, i) => {
    const check = resolved.chain.permitsSource(source.repoURL);
    if (!check.allowed)
      violations.push({
        field: multi ? `spec.sources[${i}].repoURL` : 'spec.source.repoURL',
        description: check.reason,
      });
  });
  const d = app.spec.destination;
  // The cluster by either of its names, so that a project listing it by `name` permits an
  // Application naming it by `server` (and the other way round), as the sync's ClusterDirectory does.
  const cluster = await destinationCluster(db, d, pending);
  if (d.name && !d.server && !cluster)
    violations.push({
      field: 'spec.destination.name',
      description: `cluster ${d.name} is not registered`,
    });
  const server = d.server || cluster?.server || '';
  if (server) {
    const check = resolved.chain.permitsDestination({
      server,
      name: cluster?.name ?? d.name,
      namespace: d.namespace ?? '',
      project: cluster?.project,
    });
    if (!check.allowed) violations.push({ field: 'spec.destination', description: check.reason });
  }
  return violations;
}

async function destinationCluster(
  db: Kysely<ApiDatabase>,
  d: Application['spec']['destination'],
  pending: PendingObjects | undefined,
): Promise<{ server: string; name: string; project?: string | undefined } | undefined> {
  for (const [name, server] of pending?.clusters ?? []) {
    if ((d.name && name === d.name) || (d.server && server === d.server)) return { server, name };
  }
  if (!d.name && !d.server) return undefined;
  const found = await findCluster(db, d.name ? { name: d.name } : { server: d.server! });
  return found?.cluster;
}
