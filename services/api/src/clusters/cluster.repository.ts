// The clusters projection and the sealed credentials beside it.
import type { Kysely, Transaction } from 'kysely';
import type { Sealed, SealedTable } from '@capstan/sealing';
import type { ApiDatabase } from '../support/db.table.js';
import type { ClusterInfo } from './cluster.aggregate.js';

type Db = Kysely<ApiDatabase> | Transaction<ApiDatabase>;

/** A cluster's control-plane credential (JSON), bound to its server URL. */
export const sealedClusterCredentials: SealedTable = {
  name: 'cluster credentials',
  schema: 'api',
  table: 'cluster_credentials',
  idColumn: 'server',
  boundTo: (server) => server,
};

export interface StoredCluster {
  cluster: ClusterInfo;
  version: number;
  uid: string;
  createdAt: Date;
  updatedAt: Date;
}

type ClusterRow = ApiDatabase['clusters'] & { sealed_key_id: string | null };

const toStored = (r: ClusterRow): StoredCluster => ({
  cluster: {
    name: r.name,
    server: r.server,
    ...(r.project ? { project: r.project } : {}),
    namespaces: r.namespaces as string[],
    labels: r.labels as Record<string, string>,
    credentialType: r.credential_type as ClusterInfo['credentialType'],
    // The key the credential is sealed with now: a rotation re-seals it without an event.
    keyId: r.sealed_key_id ?? r.key_id,
    insecure: r.insecure,
    serverName: r.server_name,
    hasCaData: r.has_ca_data,
  },
  version: r.version,
  uid: r.uid,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function upsertClusterRow(
  db: Db,
  c: ClusterInfo,
  version: number,
  uid: string,
  at: Date,
): Promise<void> {
  const values = {
    name: c.name,
    project: c.project ?? null,
    namespaces: JSON.stringify(c.namespaces),
    labels: JSON.stringify(c.labels),
    credential_type: c.credentialType,
    insecure: c.insecure,
    server_name: c.serverName,
    has_ca_data: c.hasCaData,
    key_id: c.keyId,
    version,
    updated_at: at,
  };
  await db
    .withSchema('api')
    .insertInto('clusters')
    .values({ ...values, server: c.server, uid, created_at: at })
    .onConflict((oc) => oc.column('server').doUpdateSet(values))
    .execute();
}

export async function deleteClusterRow(db: Db, server: string): Promise<void> {
  await db.withSchema('api').deleteFrom('cluster_credentials').where('server', '=', server).execute();
  await db.withSchema('api').deleteFrom('clusters').where('server', '=', server).execute();
}

export async function findCluster(
  db: Db,
  by: { server?: string; name?: string },
): Promise<StoredCluster | undefined> {
  let q = selectClusters(db);
  if (by.server) q = q.where('clusters.server', '=', by.server.replace(/\/+$/, ''));
  else if (by.name) q = q.where('clusters.name', '=', by.name);
  else return undefined;
  const row = await q.executeTakeFirst();
  return row ? toStored(row) : undefined;
}

export async function listClusters(db: Db): Promise<StoredCluster[]> {
  const rows = await selectClusters(db).orderBy('clusters.name').execute();
  return rows.map(toStored);
}

function selectClusters(db: Db) {
  return db
    .withSchema('api')
    .selectFrom('clusters')
    .leftJoin('cluster_credentials', 'cluster_credentials.server', 'clusters.server')
    .selectAll('clusters')
    .select('cluster_credentials.key_id as sealed_key_id');
}

export async function putClusterCredentials(db: Db, server: string, sealed: Sealed): Promise<void> {
  const values = {
    key_id: sealed.keyId,
    nonce: sealed.nonce,
    ciphertext: sealed.ciphertext,
    updated_at: new Date(),
  };
  await db
    .withSchema('api')
    .insertInto('cluster_credentials')
    .values({ server, ...values })
    .onConflict((oc) => oc.column('server').doUpdateSet(values))
    .execute();
}

export async function getClusterCredentials(db: Db, server: string): Promise<Sealed | undefined> {
  const row = await db
    .withSchema('api')
    .selectFrom('cluster_credentials')
    .selectAll()
    .where('server', '=', server)
    .executeTakeFirst();
  return row ? { keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext } : undefined;
}
