// Use cases of target clusters. Registration seals the control-plane credential (AES-256-GCM, the
// server URL bound in) in the same transaction as the cluster's events; no response, event, log or
// audit row ever holds it. Only the services named in auth.credential-readers may read it back.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { openJson, sealJson, type Keyring } from '@capstan/sealing';
import { NotFoundError, PermissionDeniedError } from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import { actorOf } from '../auth/principal.js';
import type { RequestContext } from '../support/request.js';
import { outcomeOf, runAggregate, type WriteOutcome } from '../support/aggregate.js';
import type { WriteOptions } from '../support/write-options.js';
import { invalid } from '../support/validation.js';
import {
  CLUSTER_REMOVED,
  decideCluster,
  evolveCluster,
  initialClusterState,
  CLUSTER_REGISTERED,
  type ClusterCommand,
  type ClusterInfo,
} from './cluster.aggregate.js';
import {
  ClusterConfigSchema,
  credentialTypeOf,
  validateClusterRegistration,
  type ClusterConfig,
  type ClusterRegistration,
} from './cluster.validation.js';
import {
  deleteClusterRow,
  findCluster,
  getClusterCredentials,
  listClusters,
  putClusterCredentials,
  sealedClusterCredentials,
  upsertClusterRow,
  type StoredCluster,
} from './cluster.repository.js';

export const clusterStream = (server: string) => `clusters/${server}`;

/** The RBAC object of a cluster, as Argo CD's: `<project>/<server>` when project-scoped, else the server. */
export const clusterObject = (project: string | undefined, server: string) =>
  project ? `${project}/${server}` : server;
const objectOf = (c: StoredCluster) => clusterObject(c.cluster.project, c.cluster.server);

export class ClustersService {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      authz: Authorizer;
      keyring: Keyring;
      credentialReaders: readonly string[];
    },
  ) {}

  validate(input: unknown): ClusterRegistration {
    return validateClusterRegistration(input);
  }

  private info(reg: ClusterRegistration): ClusterInfo {
    return {
      name: reg.name,
      server: reg.server,
      ...(reg.project ? { project: reg.project } : {}),
      namespaces: reg.namespaces,
      labels: reg.labels,
      credentialType: credentialTypeOf(reg.config),
      keyId: this.deps.keyring.activeKeyId,
      insecure: reg.config.tlsClientConfig.insecure,
      serverName: reg.config.tlsClientConfig.serverName,
      hasCaData: reg.config.tlsClientConfig.caData !== '',
    };
  }

  private async run(
    ctx: RequestContext,
    server: string,
    command: ClusterCommand,
    config?: ClusterConfig,
    dryRun = false,
  ): Promise<WriteOutcome> {
    const sealed = config
      ? sealJson(this.deps.keyring, sealedClusterCredentials.boundTo(server), config)
      : undefined;
    const { events } = await runAggregate(this.deps.db, {
      dryRun,
      streamId: clusterStream(server),
      meta: { actor: actorOf(ctx.principal), correlationId: ctx.correlationId },
      initial: initialClusterState,
      evolve: evolveCluster,
      decide: (state, version) => decideCluster(command, state, version),
      project: async (trx, events, state, version, at) => {
        if (events.length === 0) return;
        if (events.at(-1)!.type === CLUSTER_REMOVED) {
          await deleteClusterRow(trx, server);
          return;
        }
        await upsertClusterRow(trx, state.cluster!, version, state.uid!, at);
        if (sealed) await putClusterCredentials(trx, server, sealed);
      },
    });
    return outcomeOf(events, CLUSTER_REGISTERED);
  }

  async create(ctx: RequestContext, input: unknown, upsert: boolean): Promise<StoredCluster> {
    const reg = validateClusterRegistration(input);
    return this.createValidated(ctx, reg, upsert);
  }

  async createValidated(
    ctx: RequestContext,
    reg: ClusterRegistration,
    upsert: boolean,
  ): Promise<StoredCluster> {
    await this.put(ctx, reg, { upsert });
    return (await findCluster(this.deps.db, { server: reg.server }))!;
  }

  /** The write of create and apply, RBAC included; a dry run only skips the append. */
  async put(ctx: RequestContext, reg: ClusterRegistration, opts: WriteOptions): Promise<WriteOutcome> {
    const { upsert } = opts;
    const existing = await findCluster(this.deps.db, { server: reg.server });
    await this.deps.authz.check(
      ctx.principal,
      'clusters',
      existing && upsert ? 'update' : 'create',
      clusterObject(reg.project, reg.server),
      ctx.via,
    );
    if (existing && upsert) await this.checkCurrent(ctx, existing);
    const byName = await findCluster(this.deps.db, { name: reg.name });
    if (byName && byName.cluster.server !== reg.server)
      throw invalid('name', `cluster name ${reg.name} is already used by ${byName.cluster.server}`);
    const pendingServer = opts.pending?.clusters.get(reg.name);
    if (pendingServer && pendingServer !== reg.server)
      throw invalid('name', `cluster name ${reg.name} is already used by ${pendingServer}`);
    return this.run(
      ctx,
      reg.server,
      { type: 'register', cluster: this.info(reg), upsert, uid: randomUUID(), credentialsChanged: true },
      reg.config,
      opts.dryRun,
    );
  }

  async update(ctx: RequestContext, input: unknown, expectedVersion: number): Promise<StoredCluster> {
    const reg = validateClusterRegistration(input);
    await this.deps.authz.check(
      ctx.principal,
      'clusters',
      'update',
      clusterObject(reg.project, reg.server),
      ctx.via,
    );
    const existing = await findCluster(this.deps.db, { server: reg.server });
    if (!existing) throw new NotFoundError(`cluster ${reg.server} not found`);
    await this.checkCurrent(ctx, existing);
    // An update without a credential keeps the stored one.
    const credentialsChanged = credentialTypeOf(reg.config) !== 'none';
    const info = credentialsChanged
      ? this.info(reg)
      : { ...this.info(reg), credentialType: existing.cluster.credentialType, keyId: existing.cluster.keyId };
    await this.run(
      ctx,
      reg.server,
      { type: 'update', cluster: info, expectedVersion, credentialsChanged },
      credentialsChanged ? reg.config : undefined,
    );
    return (await findCluster(this.deps.db, { server: reg.server }))!;
  }

  /**
   * An update is authorised against the cluster as it is today as well as as it will be, so no
   * one moves another project's cluster into their own. The refusal does not name its project.
   */
  private async checkCurrent(ctx: RequestContext, existing: StoredCluster): Promise<void> {
    const current = objectOf(existing);
    const d = this.deps.authz.decide(ctx.principal, 'clusters', 'update', current);
    await this.deps.authz.record(ctx.principal, 'clusters', 'update', current, ctx.via, d);
    if (!d.allowed)
      throw new PermissionDeniedError(
        `permission denied: clusters, update, ${existing.cluster.server} as it is registered today`,
      );
  }

  private async find(by: { server?: string; name?: string }): Promise<StoredCluster | undefined> {
    if (!by.server && !by.name) throw invalid('server', 'server or name is required');
    return findCluster(this.deps.db, by);
  }

  async get(ctx: RequestContext, by: { server?: string; name?: string }): Promise<StoredCluster> {
    const found = await this.find(by);
    await this.deps.authz.check(
      ctx.principal,
      'clusters',
      'get',
      found ? objectOf(found) : (by.server ?? by.name ?? ''),
      ctx.via,
    );
    if (!found) throw new NotFoundError(`cluster ${by.server || by.name} not found`);
    return found;
  }

  async list(ctx: RequestContext): Promise<StoredCluster[]> {
    const all = await listClusters(this.deps.db);
    const visible = all.filter(
      (c) => this.deps.authz.decide(ctx.principal, 'clusters', 'get', objectOf(c)).allowed,
    );
    await this.deps.authz.record(ctx.principal, 'clusters', 'list', '*', ctx.via, {
      allowed: true,
      reason: `listed ${visible.length} of ${all.length} clusters the caller may get`,
    });
    return visible;
  }

  async delete(ctx: RequestContext, by: { server?: string; name?: string }): Promise<void> {
    const found = await this.find(by);
    await this.deps.authz.check(
      ctx.principal,
      'clusters',
      'delete',
      found ? objectOf(found) : (by.server ?? by.name ?? ''),
      ctx.via,
    );
    if (!found) throw new NotFoundError(`cluster ${by.server || by.name} not found`);
    await this.run(ctx, found.cluster.server, { type: 'remove', server: found.cluster.server });
  }

  /** Internal: the credential for the sync service. Users never reach this, whatever their RBAC. */
  async credentials(
    ctx: RequestContext,
    by: { server?: string; name?: string },
  ): Promise<{ cluster: StoredCluster; config: ClusterConfig }> {
    const service =
      ctx.principal.kind === 'service' ? ctx.principal.name.replace(/^service:/, '') : undefined;
    const allowed =
      service !== undefined && !ctx.principal.via && this.deps.credentialReaders.includes(service);
    const object = by.server || by.name || '';
    await this.deps.authz.record(ctx.principal, 'clusters', 'get-credentials', object, ctx.via, {
      allowed,
      reason: allowed
        ? 'service is a configured credential reader (auth.credential-readers)'
        : 'only configured services may read cluster credentials',
    });
    if (!allowed)
      throw new PermissionDeniedError(
        `permission denied: clusters, get-credentials, ${object} (${ctx.principal.name})`,
      );
    const found = await this.find(by);
    if (!found) throw new NotFoundError(`cluster ${object} not found`);
    const sealed = await getClusterCredentials(this.deps.db, found.cluster.server);
    if (!sealed) throw new NotFoundError(`cluster ${found.cluster.server} has no stored credentials`);
    const server = found.cluster.server;
    const config = ClusterConfigSchema.parse(
      openJson(this.deps.keyring, sealedClusterCredentials.boundTo(server), sealed),
    );
    return { cluster: found, config };
  }
}
