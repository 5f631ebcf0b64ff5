// Rebuilds the projects, applications and clusters projections from the event store, folding each
// stream with the same evolve functions the write path uses. Runs in one transaction, so readers see
// the old projection or the new one. What does not come from these events is kept: an application's
// status (sync, health, resources, reconciledAt: the reconciler's io.capstan.sync.status-changed.v1,
// which the reconciled-status consumer rebuilds by replaying the bus stream, older verdicts ignored),
// its operations and history (api.sync_operations) and a cluster's sealed credentials.
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';
import {
  evolveProject,
  initialProjectState,
  type ProjectEvent,
  type ProjectState,
} from '../projects/project.aggregate.js';
import {
  evolveApplication,
  initialApplicationState,
  type ApplicationEvent,
  type ApplicationState,
} from '../applications/application.aggregate.js';
import {
  evolveCluster,
  initialClusterState,
  type ClusterEvent,
  type ClusterState,
} from '../clusters/cluster.aggregate.js';
import { upsertProjectRow } from '../projects/project.repository.js';
import { upsertApplicationRow } from '../applications/application.repository.js';
import { upsertClusterRow } from '../clusters/cluster.repository.js';

interface Folded<S> {
  state: S;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface RebuildResult {
  projects: number;
  applications: number;
  clusters: number;
}

type Trx = Transaction<ApiDatabase>;

interface FoldedStreams {
  projects: Map<string, Folded<ProjectState>>;
  applications: Map<string, Folded<ApplicationState>>;
  clusters: Map<string, Folded<ClusterState>>;
}

export async function rebuildProjections(db: Kysely<ApiDatabase>): Promise<RebuildResult> {
  return db.transaction().execute(async (trx) => {
    const folded = await foldStreams(trx);
    const result = {
      projects: await rebuildProjects(trx, folded.projects),
      applications: await rebuildApplications(trx, folded.applications),
      clusters: await rebuildClusters(trx, folded.clusters),
    };
    await restoreCreationTimes(trx);
    return result;
  });
}

/** Every project, application and cluster stream folded with its aggregate's evolve, in event order. */
async function foldStreams(trx: Trx): Promise<FoldedStreams> {
  const rows = await trx
    .withSchema('api')
    .selectFrom('events')
    .select(['stream_id', 'version', 'envelope'])
    .where((eb) =>
      eb.or([
        eb('stream_id', 'like', 'projects/%'),
        eb('stream_id', 'like', 'applications/%'),
        eb('stream_id', 'like', 'clusters/%'),
      ]),
    )
    .orderBy('position')
    .execute();
  const out: FoldedStreams = { projects: new Map(), applications: new Map(), clusters: new Map() };
  const fold = <S, E>(
    map: Map<string, Folded<S>>,
    initial: () => S,
    evolve: (s: S, e: E) => S,
    row: (typeof rows)[number],
  ) => {
    const envelope = (typeof row.envelope === 'string' ? JSON.parse(row.envelope) : row.envelope) as E & {
      time: string;
    };
    const at = new Date(envelope.time);
    const prev = map.get(row.stream_id) ?? { state: initial(), version: 0, createdAt: at, updatedAt: at };
    map.set(row.stream_id, {
      state: evolve(prev.state, envelope),
      version: row.version,
      createdAt: prev.createdAt,
      updatedAt: at,
    });
  };
  for (const row of rows) {
    if (row.stream_id.startsWith('projects/'))
      fold<ProjectState, ProjectEvent>(out.projects, initialProjectState, evolveProject, row);
    else if (row.stream_id.startsWith('applications/'))
      fold<ApplicationState, ApplicationEvent>(
        out.applications,
        initialApplicationState,
        evolveApplication,
        row,
      );
    else fold<ClusterState, ClusterEvent>(out.clusters, initialClusterState, evolveCluster, row);
  }
  return out;
}

async function rebuildProjects(trx: Trx, projects: FoldedStreams['projects']): Promise<number> {
  await sql`delete from api.projects`.execute(trx);
  let n = 0;
  for (const f of projects.values()) {
    if (!f.state.project) continue;
    await upsertProjectRow(trx, f.state.project, f.version, f.state.uid!, f.updatedAt);
    n++;
  }
  return n;
}

/** Applications keep their status columns: only those whose stream ended deleted are removed. */
async function rebuildApplications(trx: Trx, applications: FoldedStreams['applications']): Promise<number> {
  const live = new Set<string>();
  let n = 0;
  for (const f of applications.values()) {
    if (!f.state.application) continue;
    const { metadata } = f.state.application;
    live.add(`${metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE}/${metadata.name}`);
    await upsertApplicationRow(trx, f.state.application, f.version, f.state.uid!, f.updatedAt);
    n++;
  }
  for (const r of await trx
    .withSchema('api')
    .selectFrom('applications')
    .select(['namespace', 'name'])
    .execute()) {
    if (!live.has(`${r.namespace}/${r.name}`)) {
      await trx
        .withSchema('api')
        .deleteFrom('applications')
        .where('namespace', '=', r.namespace)
        .where('name', '=', r.name)
        .execute();
    }
  }
  return n;
}

/** Clusters keep their sealed credentials: only those whose stream ended deleted are removed. */
async function rebuildClusters(trx: Trx, clusters: FoldedStreams['clusters']): Promise<number> {
  const liveServers = new Set<string>();
  let n = 0;
  for (const f of clusters.values()) {
    if (!f.state.cluster) continue;
    liveServers.add(f.state.cluster.server);
    await upsertClusterRow(trx, f.state.cluster, f.version, f.state.uid!, f.updatedAt);
    n++;
  }
  for (const r of await trx.withSchema('api').selectFrom('clusters').select('server').execute()) {
    if (!liveServers.has(r.server))
      await trx.withSchema('api').deleteFrom('clusters').where('server', '=', r.server).execute();
  }
  return n;
}

/** Creation times come from the first event of each stream. */
async function restoreCreationTimes(trx: Trx): Promise<void> {
  const first = sql`(select stream_id, min((envelope->>'time')::timestamptz) as at from api.events group by stream_id)`;
  await sql`update api.projects t set created_at = f.at from ${first} f where f.stream_id = 'projects/' || t.name`.execute(
    trx,
  );
  await sql`update api.applications t set created_at = f.at from ${first} f where f.stream_id = 'applications/' || t.namespace || '/' || t.name`.execute(
    trx,
  );
  await sql`update api.clusters t set created_at = f.at from ${first} f where f.stream_id = 'clusters/' || t.server`.execute(
    trx,
  );
}
