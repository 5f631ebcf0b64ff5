// The one door to a target cluster during a sync. It is built for exactly one identity and every
// request it makes — discovery, reads, dry-runs, applies, hook waits, deletes — carries that
// identity: with impersonation on, the control-plane credentials authenticate and the
// Impersonate-User header (set by client-node on every request of this KubeConfig) decides what
// the request may do. There is no other client in the sync path, so nothing can fall back to
// the control-plane identity; an empty username refuses to build the client at all (fail closed).
import {
  AuthorizationV1Api,
  HttpMethod,
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
  type V1APIResource,
} from '@kubernetes/client-node';
import type { ObjectRef } from '../apply/plan.js';
import { boundedRequest, ClusterTimeoutError, type CountedRequest } from './bounded-request.js';
import {
  connectionResetOf,
  kubeConfigFor,
  type ClusterConnection,
  type SyncIdentity,
} from './kube-config.js';
import { httpStatusOf } from './kube-errors.js';

export const FIELD_MANAGER = 'capstan';

/** How a sync writes one object (the sync options Validate, Replace, Force; see apply/sync-options.ts). */
export interface WriteOptions {
  dryRun: boolean;
  /** Server-side field validation: Strict (Argo's kubectl --validate=true), Ignore (Validate=false). */
  fieldValidation?: 'Strict' | 'Ignore';
  /** Replace=true: PUT the whole object (create it when absent) instead of server-side apply. */
  replace?: boolean;
  /** Force=true with Replace=true: delete the live object and create it again. */
  force?: boolean;
}

/**
 * KubernetesObjectApi with its discovery (resource lookup) made callable, and the writes a sync
 * makes with the query parameters client-node's own methods do not take (fieldValidation).
 */
class ObjectApi extends KubernetesObjectApi {
  describe(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    return this.resource(apiVersion, kind);
  }

  async write(
    method: 'apply' | 'merge' | 'create' | 'replace',
    spec: KubernetesObject,
    query: Record<string, string | undefined>,
  ): Promise<KubernetesObject> {
    const path = await this.specUriPath(spec, method === 'create' ? 'create' : 'patch');
    const http =
      method === 'create' ? HttpMethod.POST : method === 'replace' ? HttpMethod.PUT : HttpMethod.PATCH;
    const ctx = this.configuration.baseServer.makeRequestContext(path, http);
    ctx.setHeaderParam('Accept', 'application/json, */*;q=0.8');
    ctx.setHeaderParam(
      'Content-Type',
      method === 'apply'
        ? PatchStrategy.ServerSideApply
        : method === 'merge'
          ? PatchStrategy.MergePatch
          : 'application/json',
    );
    for (const [k, v] of Object.entries(query)) if (v !== undefined) ctx.setQueryParam(k, v);
    ctx.setBody(JSON.stringify(spec));
    return this.requestPromise(ctx);
  }
}

/** Default bound on one request to a target cluster; a hung API server must not hold a sync forever. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** How long a pre-flight "allowed" answer is reused for the same identity, verb, resource and namespace. */
const ALLOWED_ANSWER_TTL_MS = 30_000;

export class TargetCluster {
  private readonly api: ObjectApi;
  private readonly authz: AuthorizationV1Api;
  private readonly allowedUntil = new Map<string, number>();

  constructor(
    readonly connection: Pick<ClusterConnection, 'name' | 'server'>,
    readonly identity: SyncIdentity,
    kc: KubeConfig,
    private readonly requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  ) {
    this.api = kc.makeApiClient(ObjectApi);
    this.authz = kc.makeApiClient(AuthorizationV1Api);
    this.resetConnections = connectionResetOf(kc);
  }

  private readonly resetConnections: () => void;

  static connect(conn: ClusterConnection, identity: SyncIdentity, requestTimeoutMs?: number): TargetCluster {
    return new TargetCluster(
      { name: conn.name, server: conn.server },
      identity,
      kubeConfigFor(conn, identity),
      requestTimeoutMs,
    );
  }

  /** One request, bounded in time, counted and traced (kube/bounded-request.ts). */
  private bounded<T>(what: string, request: Promise<T>, counted: CountedRequest): Promise<T> {
    return boundedRequest(
      {
        name: this.connection.name,
        server: this.connection.server,
        timeoutMs: this.requestTimeoutMs,
        onTimeout: () => this.resetConnections(),
      },
      what,
      request,
      counted,
    );
  }

  /** The identity as the audit trail records it. */
  get identityName(): string {
    return this.identity.kind === 'service-account'
      ? this.identity.username
      : `control-plane credentials of cluster ${this.connection.name}`;
  }

  /**
   * Pre-flight access check, as the sync identity (a SelfSubjectAccessReview made through the same
   * impersonating client): may this identity `verb` the resource in the namespace?
   */
  async mayI(
    verb: string,
    group: string,
    resource: string,
    namespace: string | undefined,
  ): Promise<{ allowed: boolean; reason: string }> {
    // "Allowed" answers are remembered briefly: the pre-flight only makes failures early and whole;
    // the API server still authorizes every real request, so a stale "allowed" is never a grant.
    const key = `${verb} ${group} ${resource} ${namespace ?? ''}`;
    const until = this.allowedUntil.get(key);
    if (until !== undefined && until > Date.now()) return { allowed: true, reason: 'remembered' };
    const review = await this.bounded(
      `access review of ${verb} ${resource}`,
      this.authz.createSelfSubjectAccessReview({
        body: {
          spec: { resourceAttributes: { verb, group, resource, ...(namespace ? { namespace } : {}) } },
        },
      }),
      { verb: 'Create', kind: 'SelfSubjectAccessReview' },
    );
    const allowed = review.status?.allowed === true;
    if (allowed) this.allowedUntil.set(key, Date.now() + ALLOWED_ANSWER_TTL_MS);
    else this.allowedUntil.delete(key);
    return { allowed, reason: review.status?.reason ?? review.status?.evaluationError ?? '' };
  }

  /** Discovery (as the sync identity): whether a kind is namespaced; undefined when the API does not serve it. */
  async scope(
    apiVersion: string,
    kind: string,
  ): Promise<{ namespaced: boolean; resource: string } | undefined> {
    try {
      const r = await this.bounded(
        `discovery of ${kind} (${apiVersion})`,
        this.api.describe(apiVersion, kind),
        { verb: 'Get', kind: 'APIResourceList' },
      );
      return r ? { namespaced: r.namespaced, resource: r.name } : undefined;
    } catch (err) {
      // An API group/version the server does not serve answers discovery with 404.
      if (httpStatusOf(err) === 404 || /HTTP-Code: 404/.test((err as Error).message ?? '')) return undefined;
      throw err;
    }
  }

  /**
   * Server-side apply as FIELD_MANAGER, forcing conflicts (Argo's --server-side --force-conflicts),
   * with server-side field validation (Strict unless Validate=false); or, with `replace`, a PUT of
   * the whole object (POST when absent; with `force`, delete and create again).
   */
  async apply(obj: KubernetesObject, options: WriteOptions): Promise<KubernetesObject> {
    const what = `${options.replace ? 'replace' : 'apply'} of ${obj.kind} ${obj.metadata?.name}`;
    const query = {
      dryRun: options.dryRun ? 'All' : undefined,
      fieldManager: FIELD_MANAGER,
      fieldValidation: options.fieldValidation ?? 'Strict',
    };
    const lenient = options.fieldValidation === 'Ignore';
    const counted = (verb: string) => ({ verb, kind: obj.kind ?? '', namespace: obj.metadata?.namespace });
    if (!options.replace && !lenient)
      return this.bounded(what, this.api.write('apply', obj, { ...query, force: 'true' }), counted('Patch'));
    const ref = {
      apiVersion: obj.apiVersion!,
      kind: obj.kind!,
      name: obj.metadata!.name!,
      namespace: obj.metadata?.namespace,
    };
    const live = await this.read(ref);
    if (live === undefined)
      return this.bounded(what, this.api.write('create', obj, query), counted('Create'));
    // Validate=false: server-side apply refuses a field the schema does not declare whatever
    // fieldValidation says (it needs a typed object), so the object is written as kubectl's
    // client-side apply would: created, or merge-patched, with unknown fields dropped.
    if (!options.replace) return this.bounded(what, this.api.write('merge', obj, query), counted('Patch'));
    if (options.force && !options.dryRun) {
      // kubectl replace --force: delete, wait until it is gone, create.
      await this.delete(ref, { dryRun: false, propagationPolicy: 'Background' });
      const deadline = Date.now() + this.requestTimeoutMs;
      while ((await this.read(ref)) !== undefined) {
        if (Date.now() > deadline)
          throw new ClusterTimeoutError(
            `${what}: still terminating after ${this.requestTimeoutMs} ms (timeout)`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
      return this.bounded(what, this.api.write('create', obj, query), counted('Create'));
    }
    // The live resourceVersion: a replace never overwrites a change it did not see.
    const update = { ...obj, metadata: { ...obj.metadata, resourceVersion: live.metadata?.resourceVersion } };
    return this.bounded(
      what,
      this.api.write('replace', update as KubernetesObject, query),
      counted('Update'),
    );
  }

  async read(ref: ObjectRef): Promise<KubernetesObject | undefined> {
    try {
      return await this.bounded(
        `read of ${ref.kind} ${ref.name}`,
        this.api.read({
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
        }),
        { verb: 'Get', kind: ref.kind, namespace: ref.namespace },
      );
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /**
   * One page of a kind in a namespace ('' for all, or cluster-scoped), at most `limit` items: a
   * tree or an event list is read in bounded memory. `more` says the server had more.
   */
  async list(
    apiVersion: string,
    kind: string,
    namespace: string,
    options: { limit: number; fieldSelector?: string },
  ): Promise<{ items: KubernetesObject[]; more: boolean }> {
    const page = await this.bounded(
      `list of ${kind}${namespace ? ` in ${namespace}` : ''}`,
      this.api.list(
        apiVersion,
        kind,
        namespace || undefined,
        undefined,
        undefined,
        undefined,
        options.fieldSelector,
        undefined,
        options.limit,
      ),
      { verb: 'List', kind, namespace: namespace || undefined },
    );
    return { items: page.items, more: Boolean(page.metadata?._continue) };
  }

  /** Deletes with `propagationPolicy` (default Background: dependents are collected afterwards). */
  async delete(
    ref: ObjectRef,
    options: { dryRun: boolean; propagationPolicy?: 'Foreground' | 'Background' | 'Orphan' },
  ): Promise<'deleted' | 'absent'> {
    try {
      await this.bounded(
        `delete of ${ref.kind} ${ref.name}`,
        this.api.delete(
          {
            apiVersion: ref.apiVersion,
            kind: ref.kind,
            metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
          },
          undefined,
          options.dryRun ? 'All' : undefined,
          undefined,
          undefined,
          options.propagationPolicy ?? 'Background',
        ),
        { verb: 'Delete', kind: ref.kind, namespace: ref.namespace },
      );
      return 'deleted';
    } catch (err) {
      if (httpStatusOf(err) === 404) return 'absent';
      throw err;
    }
  }
}
