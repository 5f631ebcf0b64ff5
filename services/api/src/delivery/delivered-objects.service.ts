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
} from '@capstan/service';
import { DEFAULT_CONTROL_NAMESPACE, type AppProject } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import type { Principal } from '../auth/principal.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { ApplicationsService } from '../applications/applications.service.js';
import { findApplication, findApplications } from '../applications/application.repository.js';
import { listProjects } from '../projects/project.repository.js';
import { listClusters } from '../clusters/cluster.repository.js';
import {
  decideDelivery,
  decidePrune,
  objectKey,
  type DeliveredObject,
  type DeliveryVerdict,
} from './delivery-checks.js';
import { applicationsIn, findDelivered } from './delivered-objects.repository.js';
import { appKey, type AppRef } from './tracking.js';
import { keyOf, parseDelivered, type Validators } from './delivered-manifests.js';
import { DeliveredWrites } from './delivered-writes.js';
import { delivererName } from './deliverer-rights.js';
import type { DeliveringApplications } from './delivering-applications.js';
import type { ApplicationSetsService } from '../applicationsets/applicationsets.service.js';
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
  ) {
    this.validators = {
      project: (raw) => deps.projects.validate(raw),
      application: (raw) => deps.applications.validate(raw),
    };
    this.writes = new DeliveredWrites(deps, this.validators);
  }

  private readonly validators: Validators;
  private readonly writes: DeliveredWrites;

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
    if (applied && !input.dryRun) verdicts = await this.writes.write(as, ref, input, decided);
    else if (applied) verdicts = await this.writes.dryRunSets(as, input, decided);
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
    const { objects, invalid } = parseDelivered(input.objectsJson, this.validators);
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
    const clusters = (await listClusters(this.deps.db)).map((c) => ({
      name: c.cluster.name,
      server: c.cluster.server,
      ...(c.cluster.project ? { project: c.cluster.project } : {}),
    }));
    const d = deliverer.spec.destination;
    const server = d.server || clusters.find((c) => c.name === d.name)?.server || '';
    const verdicts = decideDelivery({
      deliverer: { ref, application: deliverer, server },
      controlNamespace: DEFAULT_CONTROL_NAMESPACE,
      objects,
      projects: (name) => projects.get(name),
      applications: new Map(existingApps.map((a) => [objectKey(keyOf(a.application)), a.application])),
      applicationViolations: violations,
      setOwners: owners,
      clusters,
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
