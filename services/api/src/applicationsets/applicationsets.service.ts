// The public ApplicationSetService: every call is authenticated by the api and forwarded to the
// appset service, which owns ApplicationSets and asks the api (ApplicationSetWritesService) to decide
// and write what they generate. ApplicationSets have no project and no RBAC resource of their own
// (proposal 003): a set is visible to a caller who may get every Application it owns today (a set
// that owns none: to its recorded owner and to admins), and the api checks that before it answers a
// read and before it forwards a change or deletion of an existing set. Argo's `applicationsets`
// policy lines add denials (appset-policy.ts).
import type { Kysely } from 'kysely';
import {
  CapstanError,
  FailedPreconditionError,
  NotFoundError,
  PermissionDeniedError,
  UnavailableError,
} from '@capstan/service';
import { ARGO_API_VERSION, DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import type { appsetv1 } from '@capstan/proto';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { PolicyStore } from '../rbac/policy-store.js';
import type { RequestContext } from '../support/request.js';
import type { Principal } from '../auth/principal.js';
import { invalid } from '../support/validation.js';
import { APPSET_SERVICE, type AppSetBackend, type UnconfiguredAppSetBackend } from './appset-client.js';
import type { Delegations } from '../auth/delegations.js';
import { sameManifest } from '../support/canonical.js';
import type { WriteOutcome } from '../support/aggregate.js';
import { APPLICATIONSETS, applicationSetLinesRefusal } from './appset-policy.js';
import { ownedBySet, setOwner, setOwners, type OwnedSummary } from './owned-applications.repository.js';
import type { SetRef } from './ownership.js';
import type { Verdict } from './generated-applications.service.js';
import { delivererRef } from '../delivery/deliverer-rights.js';
import { deliveredRefusal } from '../delivery/tracking.js';

type Json = Record<string, unknown>;

const META_KEYS = [
  'name',
  'namespace',
  'labels',
  'annotations',
  'resourceVersion',
  'creationTimestamp',
  'uid',
];

/** The set as the API returns it (capstan.api.v1.ApplicationSet's JSON mapping). */
export function applicationSetView(set: Json): Json {
  const meta = (set.metadata ?? {}) as Json;
  return {
    metadata: Object.fromEntries(META_KEYS.filter((k) => meta[k] !== undefined).map((k) => [k, meta[k]])),
    ...(set.spec !== undefined ? { spec: set.spec } : {}),
    ...(set.status !== undefined ? { status: set.status } : {}),
  };
}

/** The manifest handed to appset: Argo CD's shape, without the fields the api's message adds. */
export function applicationSetManifest(set: Json, field: string): Json {
  const at = (path: string) => (field ? `${field}.${path}` : path);
  if (set.apiVersion !== undefined && set.apiVersion !== ARGO_API_VERSION)
    throw invalid(at('apiVersion'), `must be ${ARGO_API_VERSION}`);
  if (set.kind !== undefined && set.kind !== 'ApplicationSet')
    throw invalid(at('kind'), 'must be ApplicationSet');
  const meta = (set.metadata ?? {}) as Json;
  if (typeof meta.name !== 'string' || meta.name === '') throw invalid(at('metadata.name'), 'required');
  const { resourceVersion: _rv, creationTimestamp: _ct, uid: _uid, ...metadata } = meta;
  return { apiVersion: ARGO_API_VERSION, kind: 'ApplicationSet', metadata, spec: set.spec ?? {} };
}

export function verdictOf(a: appsetv1.GeneratedApplication): Verdict {
  return {
    name: a.name,
    namespace: a.namespace,
    project: a.project,
    action: a.action as Verdict['action'],
    allowed: a.allowed,
    reason: a.reason,
  };
}

/**
 * The appset service answers a write it refused (a generated or owned Application the caller may not
 * write) with the verdicts and stores nothing; for the api's caller that is a refusal, never a
 * success: PERMISSION_DENIED naming each refused Application, its project, action and reason.
 */
export function requireAccepted(result: appsetv1.ApplicationSetResult): appsetv1.ApplicationSetResult {
  const refused = result.applications.map(verdictOf).filter((v) => !v.allowed);
  if (refused.length === 0) return result;
  throw new PermissionDeniedError(
    `${refused.length} of ${result.applications.length} Applications refused: ` +
      refused
        .map(
          (v) =>
            `application ${JSON.stringify(v.name)} (project ${JSON.stringify(v.project)}, ${v.action}): ${v.reason}`,
        )
        .join('; '),
  );
}

/** What a declarative apply of a set compares: the fields a manifest sets. */
function comparable(set: Json): unknown {
  const meta = (set.metadata ?? {}) as Json;
  return { labels: meta.labels ?? {}, annotations: meta.annotations ?? {}, spec: set.spec ?? {} };
}

export function refOf(set: Json): SetRef {
  const meta = (set.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  return {
    name: typeof meta.name === 'string' ? meta.name : '',
    namespace:
      typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : DEFAULT_CONTROL_NAMESPACE,
  };
}

export class ApplicationSetsService {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      authz: Authorizer;
      policy: PolicyStore;
      backend: AppSetBackend;
      delegations: Delegations;
    },
  ) {}

  /** Whether `p` may see a set that owns `owned` and whose recorded owner is `owner`; with the reason. */
  private visibility(
    p: Principal,
    set: SetRef,
    owned: readonly OwnedSummary[],
    owner: string | undefined,
  ): { allowed: boolean; reason: string } {
    if (owned.length === 0) {
      if (owner !== undefined && owner === p.name) return { allowed: true, reason: 'the recorded owner' };
      if (this.deps.authz.isAdmin(p)) return { allowed: true, reason: 'an admin' };
      return { allowed: false, reason: 'the set owns no Application and the caller is not its owner' };
    }
    for (const a of owned) {
      const d = this.deps.authz.decide(p, 'applications', 'get', `${a.project}/${a.name}`);
      if (!d.allowed) return { allowed: false, reason: `may not get application ${a.project}/${a.name}` };
      const extra = applicationSetLinesRefusal(this.deps.policy.current, p, 'get', a.project, set);
      if (extra) return { allowed: false, reason: `applicationsets, get, ${extra.object}: ${extra.reason}` };
    }
    return { allowed: true, reason: `may get all ${owned.length} Applications it owns` };
  }

  /** Refuses (audited) unless the caller may see the set; `action` is what they are about to do. */
  private async requireVisible(ctx: RequestContext, set: SetRef, action: string): Promise<void> {
    const key = `${set.namespace}/${set.name}`;
    const [owned, owners] = await Promise.all([
      ownedBySet(this.deps.db, set.namespace),
      setOwners(this.deps.db),
    ]);
    const v = this.visibility(ctx.principal, set, owned.get(key) ?? [], owners.get(key));
    await this.deps.authz.record(ctx.principal, APPLICATIONSETS, action, key, ctx.via, v);
    if (!v.allowed)
      throw new PermissionDeniedError(
        `permission denied: ${APPLICATIONSETS}, ${action}, ${key} (${ctx.principal.name})`,
      );
  }

  async get(ctx: RequestContext, namespace: string, name: string): Promise<Json> {
    if (!name) throw invalid('name', 'required');
    const ns = namespace || DEFAULT_CONTROL_NAMESPACE;
    const result = await this.deps.backend.get(ctx.principal, ns, name);
    await this.requireVisible(ctx, { namespace: ns, name }, 'get');
    return applicationSetView(JSON.parse(result.applicationSetJson) as Json);
  }

  async list(
    ctx: RequestContext,
    q: { projects: readonly string[]; selector: string; appsetNamespace: string },
  ): Promise<Json[]> {
    const sets = (await this.deps.backend.list(ctx.principal, q.appsetNamespace, q.selector)).map(
      (j) => JSON.parse(j) as Json,
    );
    const [owned, owners] = await Promise.all([
      ownedBySet(this.deps.db, q.appsetNamespace),
      setOwners(this.deps.db),
    ]);
    const visible = sets.filter((s) => {
      const ref = refOf(s);
      const key = `${ref.namespace}/${ref.name}`;
      const apps = owned.get(key) ?? [];
      if (q.projects.length > 0 && !apps.some((a) => q.projects.includes(a.project))) return false;
      return this.visibility(ctx.principal, ref, apps, owners.get(key)).allowed;
    });
    await this.deps.authz.record(ctx.principal, APPLICATIONSETS, 'list', q.appsetNamespace || '*', ctx.via, {
      allowed: true,
      reason: `listed ${visible.length} of ${sets.length} ApplicationSets the caller may see`,
    });
    return visible.map(applicationSetView);
  }

  /** Refuses up front when ApplicationSet calls cannot succeed (so an apply writes nothing). */
  requireBackend(): void {
    if ((this.deps.backend as Partial<UnconfiguredAppSetBackend>).unconfigured)
      throw new UnavailableError('the appset service is not configured (appset.address)');
  }

  async create(ctx: RequestContext, set: Json, opts: { upsert: boolean; dryRun: boolean }): Promise<Json> {
    const manifest = applicationSetManifest(set, 'applicationset');
    const ref = refOf(manifest);
    if (opts.upsert && (await this.find(ctx, ref))) {
      await this.requireNotDelivered(ctx, ref);
      await this.requireVisible(ctx, ref, 'update');
    }
    const result = requireAccepted(await this.deps.backend.upsert(ctx.principal, manifest, opts));
    return applicationSetView(JSON.parse(result.applicationSetJson) as Json);
  }

  /**
   * Declarative apply of one set: unchanged (labels, annotations and spec as stored) writes nothing;
   * otherwise an upsert (a dry run on apply's dry run), with the same checks as create.
   */
  async put(ctx: RequestContext, manifest: Json, opts: { dryRun: boolean }): Promise<WriteOutcome> {
    const ref = refOf(manifest);
    const current = await this.find(ctx, ref);
    if (current) await this.requireNotDelivered(ctx, ref);
    if (current && sameManifest(comparable(current), comparable(manifest))) return 'unchanged';
    if (current) await this.requireVisible(ctx, ref, 'update');
    requireAccepted(
      await this.deps.backend.upsert(ctx.principal, manifest, { upsert: true, dryRun: opts.dryRun }),
    );
    return current ? 'configured' : 'created';
  }

  /**
   * A set an Application delivered from git changes in git only: anyone else (users, other
   * Applications) is refused; its delivering Application is its recorded owner.
   */
  private async requireNotDelivered(ctx: RequestContext, ref: SetRef): Promise<void> {
    const owner = await setOwner(this.deps.db, ref);
    const app = owner ? delivererRef(owner) : undefined;
    if (app && owner !== ctx.principal.name)
      throw new FailedPreconditionError(deliveredRefusal('ApplicationSet', ref.name, app));
  }

  /** The stored set, or undefined when the appset service has none of that name. */
  private async find(ctx: RequestContext, ref: SetRef): Promise<Json | undefined> {
    try {
      const res = await this.deps.backend.get(ctx.principal, ref.namespace, ref.name);
      return JSON.parse(res.applicationSetJson) as Json;
    } catch (err) {
      if (err instanceof NotFoundError || (err instanceof CapstanError && err.code === 'NOT_FOUND'))
        return undefined;
      throw err;
    }
  }

  async delete(ctx: RequestContext, namespace: string, name: string): Promise<Verdict[]> {
    if (!name) throw invalid('name', 'required');
    const ref = { namespace: namespace || DEFAULT_CONTROL_NAMESPACE, name };
    await this.deps.backend.get(ctx.principal, ref.namespace, ref.name);
    await this.requireNotDelivered(ctx, ref);
    await this.requireVisible(ctx, ref, 'delete');
    const res = await this.deps.backend.delete(ctx.principal, ref.namespace, ref.name);
    const verdicts = res.applications.map(verdictOf);
    // A deleted set has no owner any more (a later set of that name records its own).
    if (verdicts.every((v) => v.allowed))
      await this.deps.delegations.forgetOwner(APPSET_SERVICE, `applicationsets/${ref.namespace}/${ref.name}`);
    return verdicts;
  }

  async generate(ctx: RequestContext, set: Json): Promise<{ applications: Json[]; verdicts: Verdict[] }> {
    const manifest = applicationSetManifest(set, 'applicationSet');
    const result = await this.deps.backend.generate(ctx.principal, manifest);
    const generated = [...result.applications].sort((a, b) => a.name.localeCompare(b.name));
    return {
      applications: generated
        .filter((a) => a.applicationJson)
        .map((a) => JSON.parse(a.applicationJson) as Json),
      verdicts: generated.map(verdictOf),
    };
  }
}
