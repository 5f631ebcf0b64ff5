// Rebuilds the projects, applications and clusters projections from the event store, folding each
// stream with the same evolve functions the write path uses. Runs in one transaction, so readers see
// the old projection or the new one. What does not come from these events is kept: an application's
// status (sync, health, resources, reconciledAt: the reconciler's io.capstan.sync.status-changed.v1,
// which the reconciled-status consumer rebuilds by replaying the bus stream, older verdicts ignored),
// its operations and history (api.sync_operations) and a cluster's sealed credentials.
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import { sql, type Kysely } from 'kysely';
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

export async function rebuildProjections(db: Kysely<ApiDatabase>): Promise<RebuildResult> {
  return db.transaction().execute(async (trx) => {
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
    const projects = new Map<string, Folded<ProjectState>>();
    const applications = new Map<string, Folded<ApplicationState>>();
    const clusters = new Map<string, Folded<ClusterState>>();
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
        fold<ProjectState, ProjectEvent>(projects, initialProjectState, evolveProject, row);
      else if (row.stream_id.startsWith('applications/'))
        fold<ApplicationState, ApplicationEvent>(
          applications,
          initialApplicationState,
          evolveApplication,
          row,
        );
      else fold<ClusterState, ClusterEvent>(clusters, initialClusterState, evolveCluster, row);
    }

    await sql`delete from api.projects`.execute(trx);
    let p = 0;
    for (const f of projects.values()) {
      if (!f.state.project) continue;
      await upsertProjectRow(trx, f.state.project, f.version, f.state.uid!, f.updatedAt);
      p++;
    }
    // Applications keep their status columns: remove only those whose stream ended deleted.
    const live = new Set<string>();
    let a = 0;
    for (const f of applications.values()) {
      if (!f.state.application) continue;
      const key = `${f.state.application.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE}/${f.state.application.metadata.name}`;
      live.add(key);
      await upsertApplicationRow(trx, f.state.application, f.version, f.state.uid!, f.updatedAt);
      a++;
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
    const liveServers = new Set<string>();
    let c = 0;
    for (const f of clusters.values()) {
      if (!f.state.cluster) continue;
      liveServers.add(f.state.cluster.server);
      await upsertClusterRow(trx, f.state.cluster, f.version, f.state.uid!, f.updatedAt);
      c++;
    }
    for (const r of await trx.withSchema('api').selectFrom('clusters').select('server').execute()) {
      if (!liveServers.has(r.server))
        await trx.withSchema('api').deleteFrom('clusters').where('server', '=', r.server).execute();
    }
    // Creation times come from the first event of each stream.
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
    return { projects: p, applications: a, clusters: c };
  });
}
