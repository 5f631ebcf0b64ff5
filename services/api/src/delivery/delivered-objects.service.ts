// DeliveredObjectsService: the argoproj.io objects (AppProject, Application) an Application's
// rendered manifests hold are Capstan's own, so the sync service hands them to the api, their owner.
// Everything is decided before anything is written, all or nothing (delivery-checks.ts), then
// written as the delivering Application (events and audit rows name it, via service:sync):
// projects parents first, then Applications; prune and cascade delete Applications first, then
// projects. Every decision is one audit row.
import type { Kysely } from 'kysely';
import {
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
  type DeliveryVerdict,
} from './delivery-checks.js';
import { applicationsIn, findDelivered } from './delivered-objects.repository.js';
import { appKey, withTracking, type AppRef } from './tracking.js';

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
    },
  ) {}

  async apply(ctx: RequestContext, input: DeliverInput): Promise<DeliverResult> {
    await this.requireDeliveringService(ctx, input.application);
    const ref = input.application;
    const as: RequestContext = { ...ctx, principal: delivererPrincipal(ref) };
    const verdicts = input.cascadeDelete ? await this.decideCascade(ref) : await this.decideSync(ref, input);
    await this.deps.authz.recordAll(
      as.principal,
      ctx.via,
      verdicts.map((v) => ({
        resource: v.kind === 'AppProject' ? 'projects' : 'applications',
        action: auditAction(v.action),
        object: v.object,
        decision: { allowed: v.allowed, reason: `${v.reason} (operation ${input.operationId})` },
      })),
    );
    const applied = verdicts.every((v) => v.allowed);
    if (applied && !input.dryRun) await this.write(as, ref, input, verdicts);
    return {
      applied,
      results: verdicts.map((v) => ({
        ...v,
        status: statusOf(v, applied),
        // When one object is refused nothing is written: the others say so instead of what they would have done.
        ...(applied || !v.allowed
          ? {}
          : { reason: `${v.kind} ${v.name} not written: another delivered object was refused` }),
      })),
    };
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
    const verdicts = decideDelivery({
      deliverer: { ref, application: deliverer, server: await this.serverOf(deliverer) },
      controlNamespace: DEFAULT_CONTROL_NAMESPACE,
      objects,
      projects: (name) => projects.get(name),
      applications: new Map(existingApps.map((a) => [objectKey(keyOf(a.application)), a.application])),
      applicationViolations: violations,
    });
    verdicts.push(...invalid);
    if (!input.prune) return verdicts;
    const delivering = new Set(objects.map((o) => `${o.kind}:${objectKey(o)}`));
    const stale = (await findDelivered(this.deps.db, ref)).filter(
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
    return this.checkPrunable(decidePrune(await findDelivered(this.deps.db, ref), 'Delete=false'), []);
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
        } else {
          throw new ValidationError([{ field: 'kind', description: 'expected AppProject or Application' }]);
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

  /** Projects parents first, then Applications; pruned Applications before pruned projects. */
  private async write(
    as: RequestContext,
    ref: AppRef,
    input: DeliverInput,
    verdicts: readonly DeliveryVerdict[],
  ): Promise<void> {
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
    const pruned = verdicts.filter((v) => v.action === 'prune');
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

/** Delivered objects are written as their delivering Application, through the sync service. */
function delivererPrincipal(ref: AppRef): Principal {
  return {
    name: `application:${appKey(ref)}`,
    groups: [],
    kind: 'service',
    via: `service:${DELIVERING_SERVICE}`,
  };
}

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
      return 'deliver';
    default:
      return action;
  }
}

function statusOf(v: DeliveryVerdict, applied: boolean): DeliverResult['results'][number]['status'] {
  if (!v.allowed) return 'SyncFailed';
  if (v.action === 'prune') return applied ? 'Pruned' : 'SyncFailed';
  if (v.action === 'prune-skipped') return 'PruneSkipped';
  return applied ? 'Synced' : 'SyncFailed';
}
