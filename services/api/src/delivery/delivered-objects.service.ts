// DeliveredObjectsService: the argoproj.io objects (AppProject, Application) an Application's
// rendered manifests hold are Capstan's own, so the sync service hands them to the api, their owner.
// Everything is decided before anything is written, all or nothing (delivery-checks.ts), then
// written as the delivering Application (events and audit rows name it, via service:sync):
// projects parents first, then Applications; prune and cascade delete Applications first, then
// projects. Every decision is one audit row.
import type { Kysely } from 'kysely';
import {
  CapstanError,
  FailedPreconditionError,
  NotFoundError,
  PermissionDeniedError,
  ValidationError,
} from '@capstan/service';
import { DEFAULT_CONTROL_NAMESPACE, type Application, type AppProject } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import type { Principal } from '../auth/principal.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { ApplicationsService } from '../applications/applications.service.js';
import { findApplication, findApplications } from '../applications/application.repository.js';
import { findProject, listProjects } from '../projects/project.repository.js';
import { findCluster } from '../clusters/cluster.repository.js';
import {
  decideDelivery,
  decidePrune,
  objectKey,
  type DeliveredObject,
  type DeliveredSet,
  type DeliveryVerdict,
} from './delivery-checks.js';
import { applicationsIn, findDelivered } from './delivered-objects.repository.js';
import { appKey, withTracking, type AppRef } from './tracking.js';
import { delivererName } from './deliverer-rights.js';
import type { DeliveringApplications } from './delivering-applications.js';
import {
  applicationSetManifest,
  type ApplicationSetsService,
} from '../applicationsets/applicationsets.service.js';
import { setOwners } from '../applicationsets/owned-applications.repository.js';

/** The service that may deliver objects for Applications (its own identity, no delegation). */
export const DELIVERING_SERVICE = 'sync';

export interface DeliverInput {
  application: AppRef;
  operationId: string;
  objectsJson: readonly string[];
  prune: boolean;
  dryRun: boolean;
  cascadeDelete: boolean;
}

export interface DeliverResult {
  results: (DeliveryVerdict & { status: 'Synced' | 'SyncFailed' | 'Pruned' | 'PruneSkipped' })[];
  applied: boolean;
}

export class DeliveredObjectsService {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      authz: Authorizer;
      projects: ProjectsService;
      applications: ApplicationsService;
      applicationSets: ApplicationSetsService;
      deliverers: DeliveringApplications;
    },
  ) {}

  async apply(ctx: RequestContext, input: DeliverInput): Promise<DeliverResult> {
    await this.requireDeliveringService(ctx, input.application);
    const ref = input.application;
    const as: RequestContext = {
      ...ctx,
      principal: input.cascadeDelete
        ? await this.cascadeActor(ref)
        : await this.deps.deliverers.principal(ref, `service:${DELIVERING_SERVICE}`),
    };
    const decided = input.cascadeDelete ? await this.decideCascade(ref) : await this.decideSync(ref, input);
    let verdicts = decided;
    const applied = decided.every((v) => v.allowed);
    // ApplicationSets go last, like a later sync wave: they generate into the projects delivered
    // before them. A set the appset service refuses fails the sync; what came before it stays.
    if (applied && !input.dryRun) verdicts = await this.write(as, ref, input, decided);
    else if (applied) verdicts = await this.dryRunSets(as, input, decided);
    await this.deps.authz.recordAll(
      as.principal,
      ctx.via,
      verdicts.map((v) => ({
        resource: RESOURCES[v.kind] ?? 'applications',
        action: auditAction(v.action),
        object: v.object,
        decision: { allowed: v.allowed, reason: `${v.reason} (operation ${input.operationId})` },
      })),
    );
    return {
      applied: verdicts.every((v) => v.allowed),
      results: verdicts.map((v) =>
        // Refused before writing: nothing is written, and the others say so.
        !applied && v.allowed
          ? {
              ...v,
              status: 'SyncFailed' as const,
              reason: `${v.kind} ${v.name} not written: another delivered object was refused`,
            }
          : { ...v, status: statusOf(v) },
      ),
    };
  }

  /** The Application being deleted, with its grants while it still exists (its sets need them). */
  private async cascadeActor(ref: AppRef): Promise<Principal> {
    try {
      return await this.deps.deliverers.principal(ref, `service:${DELIVERING_SERVICE}`);
    } catch (err) {
      if (err instanceof CapstanError && err.code === 'UNAUTHENTICATED') return cascadePrincipal(ref);
      throw err;
    }
  }

  private async requireDeliveringService(ctx: RequestContext, app: AppRef): Promise<void> {
    const p = ctx.principal;
    if (p.kind === 'service' && p.name === `service:${DELIVERING_SERVICE}` && !p.via) return;
    const reason = `DeliveredObjectsService.Apply is for the ${DELIVERING_SERVICE} service's own identity`;
    await this.deps.authz.record(p, 'internal', 'call', appKey(app), ctx.via, { allowed: false, reason });
    throw new PermissionDeniedError(`permission denied: ${reason}`);
  }

  /** A sync's delivery: every object decided, plus what it delivered before and no longer does. */
  private async decideSync(ref: AppRef, input: DeliverInput): Promise<DeliveryVerdict[]> {
    const stored = await findApplication(this.deps.db, ref.namespace, ref.name);
    if (!stored) throw new NotFoundError(`application ${appKey(ref)} not found`);
    const deliverer = stored.application;
    const { objects, invalid } = this.parse(input.objectsJson);
    const projects = new Map(
      (await listProjects(this.deps.db)).map((p) => [p.project.metadata.name, p.project]),
    );
    const apps = objects.flatMap((o) => (o.kind === 'Application' ? [o] : []));
    const existingApps = await findApplications(
      this.deps.db,
      apps.map((a) => ({ namespace: a.namespace, name: a.name })),
    );
    const pendingProjects = new Map<string, AppProject>();
    for (const o of objects) if (o.kind === 'AppProject') pendingProjects.set(o.name, o.value);
    const violations = new Map<string, string[]>();
    for (const a of apps) {
      const v = await this.deps.applications.projectViolations(a.value, {
        pending: { projects: pendingProjects, clusters: new Map() },
        projects,
      });
      if (v.length > 0)
        violations.set(
          objectKey(a),
          v.map((x) => `${x.field}: ${x.description}`),
        );
    }
    const owners = await setOwners(this.deps.db);
    const verdicts = decideDelivery({
      deliverer: { ref, application: deliverer, server: await this.serverOf(deliverer) },
      controlNamespace: DEFAULT_CONTROL_NAMESPACE,
      objects,
      projects: (name) => projects.get(name),
      applications: new Map(existingApps.map((a) => [objectKey(keyOf(a.application)), a.application])),
      applicationViolations: violations,
      setOwners: owners,
    });
    verdicts.push(...invalid);
    if (!input.prune) return verdicts;
    const delivering = new Set(objects.map((o) => `${o.kind}:${objectKey(o)}`));
    const stale = [...(await findDelivered(this.deps.db, ref)), ...deliveredSets(owners, ref)].filter(
      (o) => !delivering.has(`${o.kind}:${objectKey(o)}`),
    );
    return [...verdicts, ...(await this.checkPrunable(decidePrune(stale, 'Prune=false'), objects))];
  }

  /** The delivering Application was deleted with cascade: everything it delivered goes too. */
  private async decideCascade(ref: AppRef): Promise<DeliveryVerdict[]> {
    const stored = await findApplication(this.deps.db, ref.namespace, ref.name);
    if (stored && !(stored.application.metadata as { deletionTimestamp?: string }).deletionTimestamp)
      throw new FailedPreconditionError(
        `application ${appKey(ref)} exists and is not being deleted: its delivered objects stay`,
      );
    const delivered = [
      ...(await findDelivered(this.deps.db, ref)),
      ...deliveredSets(await setOwners(this.deps.db), ref),
    ];
    return this.checkPrunable(decidePrune(delivered, 'Delete=false'), []);
  }

  /** A project is pruned only when no Application that stays is in it and no project that stays names it as parent. */
  private async checkPrunable(
    verdicts: DeliveryVerdict[],
    staying: readonly DeliveredObject[],
  ): Promise<DeliveryVerdict[]> {
    const leaving = new Set(
      verdicts.filter((v) => v.action === 'prune').map((v) => `${v.kind}:${objectKey(v)}`),
    );
    const stays = (kind: string, o: { namespace: string; name: string }) =>
      !leaving.has(`${kind}:${objectKey(o)}`);
    const projects = await listProjects(this.deps.db);
    const out: DeliveryVerdict[] = [];
    for (const v of verdicts) {
      if (v.kind !== 'AppProject' || v.action !== 'prune') {
        out.push(v);
        continue;
      }
      const apps = (await applicationsIn(this.deps.db, v.name)).filter((a) => stays('Application', a));
      const children = projects
        .filter((p) => p.project.spec.parentProject === v.name && stays('AppProject', keyOf(p.project)))
        .map((p) => p.project.metadata.name);
      children.push(
        ...staying
          .filter((o) => o.kind === 'AppProject' && o.value.spec.parentProject === v.name)
          .map((o) => o.name),
      );
      const blockers = [
        ...apps.map((a) => `Application ${objectKey(a)}`),
        ...children.map((c) => `AppProject ${c}`),
      ];
      out.push(
        blockers.length === 0
          ? v
          : {
              ...v,
              action: 'refused',
              allowed: false,
              reason: `AppProject ${v.name} cannot be pruned: ${blockers.slice(0, 3).join(', ')}${blockers.length > 3 ? ', ...' : ''} still ${blockers.length === 1 ? 'uses' : 'use'} it`,
            },
      );
    }
    return out;
  }

  /** Each object validated as a directly written one; an invalid one is refused with its field paths. */
  private parse(json: readonly string[]): { objects: DeliveredObject[]; invalid: DeliveryVerdict[] } {
    const objects: DeliveredObject[] = [];
    const invalid: DeliveryVerdict[] = [];
    json.forEach((text, i) => {
      let raw: { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
      try {
        raw = JSON.parse(text) as typeof raw;
      } catch {
        throw new ValidationError([{ field: `objects_json[${i}]`, description: 'not JSON' }]);
      }
      const kind = typeof raw?.kind === 'string' ? raw.kind : '';
      try {
        if (kind === 'AppProject') {
          const value = this.deps.projects.validate(raw);
          objects.push({ kind, ...keyOf(value), value });
        } else if (kind === 'Application') {
          const value = this.deps.applications.validate(raw);
          objects.push({ kind, ...keyOf(value), value });
        } else if (kind === 'ApplicationSet') {
          const value = applicationSetManifest(raw as Record<string, unknown>, '') as unknown as DeliveredSet;
          objects.push({ kind, ...keyOf(value), value });
        } else {
          throw new ValidationError([
            { field: 'kind', description: 'expected AppProject, Application or ApplicationSet' },
          ]);
        }
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        const name = typeof raw?.metadata?.name === 'string' ? raw.metadata.name : `#${i}`;
        const namespace =
          typeof raw?.metadata?.namespace === 'string' ? raw.metadata.namespace : DEFAULT_CONTROL_NAMESPACE;
        invalid.push({
          kind: kind || 'object',
          namespace,
          name,
          object: kind === 'AppProject' ? name : `*/${name}`,
          action: 'refused',
          allowed: false,
          reason: `${kind || 'object'} ${JSON.stringify(name)} is invalid: ${err.message}`,
        });
      }
    });
    return { objects, invalid };
  }

  private async serverOf(app: Application): Promise<string> {
    const d = app.spec.destination;
    if (d.server) return d.server;
    return d.name ? ((await findCluster(this.deps.db, { name: d.name }))?.cluster.server ?? '') : '';
  }

  /**
   * Projects parents first, then Applications, then ApplicationSets; pruned sets, then pruned
   * Applications, then pruned projects. Returns the verdicts with the sets' outcomes.
   */
  private async write(
    as: RequestContext,
    ref: AppRef,
    input: DeliverInput,
    verdicts: readonly DeliveryVerdict[],
  ): Promise<DeliveryVerdict[]> {
    const objects = input.cascadeDelete ? [] : this.parse(input.objectsJson).objects;
    const changing = new Set(
      verdicts
        .filter((v) => v.action === 'create' || v.action === 'update')
        .map((v) => `${v.kind}:${objectKey(v)}`),
    );
    const pending = new Map<string, AppProject>();
    for (const o of parentsFirst(objects)) {
      if (o.kind !== 'AppProject') continue;
      pending.set(o.name, o.value);
      if (changing.has(`AppProject:${objectKey(o)}`))
        await this.deps.projects.writeDelivered(as, withTracking(o.value, o.kind, ref), {
          projects: pending,
          clusters: new Map(),
        });
    }
    for (const o of objects)
      if (o.kind === 'Application' && changing.has(`Application:${objectKey(o)}`))
        await this.deps.applications.writeChecked(as, withTracking(o.value, o.kind, ref));
    const out = await this.writeSets(as, ref, objects, verdicts, false);
    if (out.some((v) => !v.allowed)) return out;
    await this.prune(
      as,
      verdicts.filter((v) => v.action === 'prune'),
    );
    return out;
  }

  /** Each delivered set upserted (or dry-run) as the delivering Application; a refusal stops the rest. */
  private async writeSets(
    as: RequestContext,
    ref: AppRef,
    objects: readonly DeliveredObject[],
    verdicts: readonly DeliveryVerdict[],
    dryRun: boolean,
  ): Promise<DeliveryVerdict[]> {
    const out = [...verdicts];
    let refused: string | undefined;
    for (const o of objects) {
      if (o.kind !== 'ApplicationSet') continue;
      const i = out.findIndex((v) => v.kind === o.kind && objectKey(v) === objectKey(o));
      if (refused) {
        out[i] = {
          ...out[i]!,
          action: 'skipped',
          reason: `ApplicationSet ${o.name} not written: ${refused} was refused`,
        };
        continue;
      }
      try {
        const outcome = await this.deps.applicationSets.put(as, withTracking(o.value, o.kind, ref), {
          dryRun,
        });
        if (outcome === 'unchanged')
          out[i] = { ...out[i]!, action: 'unchanged', reason: `ApplicationSet ${o.name} unchanged` };
      } catch (err) {
        if (!(err instanceof CapstanError) || err.retryable) throw err;
        out[i] = {
          ...out[i]!,
          action: 'refused',
          allowed: false,
          reason: `ApplicationSet ${objectKey(o)}: ${err.message}`,
        };
        break;
      }
    }
    return out;
  }

  /** A sync's dry run: what the appset service would decide of each delivered set (nothing written). */
  private async dryRunSets(
    as: RequestContext,
    input: DeliverInput,
    verdicts: readonly DeliveryVerdict[],
  ): Promise<DeliveryVerdict[]> {
    const objects = input.cascadeDelete ? [] : this.parse(input.objectsJson).objects;
    return this.writeSets(as, input.application, objects, verdicts, true);
  }

  private async prune(as: RequestContext, pruned: readonly DeliveryVerdict[]): Promise<void> {
    for (const v of pruned.filter((p) => p.kind === 'ApplicationSet')) {
      try {
        await this.deps.applicationSets.delete(as, v.namespace, v.name);
      } catch (err) {
        // Already gone: nothing to prune.
        if (!(err instanceof CapstanError && err.code === 'NOT_FOUND')) throw err;
      }
    }
    for (const v of pruned.filter((p) => p.kind === 'Application')) {
      // Argo CD: a pruned Application cascades when it carries the resources finalizer (its own rule).
      if (await findApplication(this.deps.db, v.namespace, v.name))
        await this.deps.applications.deleteChecked(as, v.namespace, v.name, {
          cascade: undefined,
          propagationPolicy: undefined,
        });
    }
    for (const v of pruned.filter((p) => p.kind === 'AppProject'))
      if (await findProject(this.deps.db, v.name)) await this.deps.projects.deleteDelivered(as, v.name);
  }
}

/**
 * The deleted delivering Application, for its cascade: it has no grants any more (its project may
 * be gone too), and it needs none to remove what it delivered, except its ApplicationSets, whose
 * deletion the appset service checks with grants read while it is being deleted.
 */
function cascadePrincipal(ref: AppRef): Principal {
  return { name: delivererName(ref), groups: [], kind: 'service', via: `service:${DELIVERING_SERVICE}` };
}

/** The sets whose recorded owner is this Application (it delivered them). */
function deliveredSets(owners: ReadonlyMap<string, string>, ref: AppRef) {
  const me = delivererName(ref);
  return [...owners]
    .filter(([, owner]) => owner === me)
    .map(([key]) => {
      const [namespace, name] = key.split('/') as [string, string];
      return { kind: 'ApplicationSet' as const, namespace, name, object: key };
    });
}

const RESOURCES: Record<string, string> = {
  AppProject: 'projects',
  Application: 'applications',
  ApplicationSet: 'applicationsets',
};

function keyOf(o: { metadata: { namespace?: string | undefined; name: string } }) {
  return { namespace: o.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE, name: o.metadata.name };
}

function parentsFirst(objects: readonly DeliveredObject[]): DeliveredObject[] {
  const projects = new Map(objects.flatMap((o) => (o.kind === 'AppProject' ? [[o.name, o] as const] : [])));
  const out: DeliveredObject[] = [];
  const visit = (o: DeliveredObject, depth: number) => {
    if (out.includes(o) || depth > projects.size) return;
    const parent = o.kind === 'AppProject' ? o.value.spec.parentProject : undefined;
    const p = parent ? projects.get(parent) : undefined;
    if (p) visit(p, depth + 1);
    if (!out.includes(o)) out.push(o);
  };
  for (const o of projects.values()) visit(o, 0);
  return out;
}

function auditAction(action: DeliveryVerdict['action']): string {
  switch (action) {
    case 'prune':
    case 'prune-skipped':
      return 'delete';
    case 'unchanged':
      return 'update';
    case 'refused':
    case 'skipped':
      return 'deliver';
    default:
      return action;
  }
}

function statusOf(v: DeliveryVerdict): DeliverResult['results'][number]['status'] {
  if (!v.allowed || v.action === 'skipped') return 'SyncFailed';
  if (v.action === 'prune') return 'Pruned';
  if (v.action === 'prune-skipped') return 'PruneSkipped';
  return 'Synced';
}
