// The writes of a delivery, once everything was decided: projects parents first, then
// Applications (one transaction), then ApplicationSets through the appset service, like a later sync
// wave; then what is pruned: sets, Applications, projects. All as the delivering Application.
import type { Kysely } from 'kysely';
import { CapstanError } from '@capstan/service';
import { DEFAULT_CONTROL_NAMESPACE, type AppProject } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import type { RequestContext } from '../support/request.js';
import type { ProjectsService } from '../projects/projects.service.js';
import type { ApplicationsService } from '../applications/applications.service.js';
import type { ApplicationSetsService } from '../applicationsets/applicationsets.service.js';
import { findApplications } from '../applications/application.repository.js';
import { findProject } from '../projects/project.repository.js';
import { objectKey, type DeliveredObject, type DeliveryVerdict } from './delivery-checks.js';
import { parentsFirst, parseDelivered, type Validators } from './delivered-manifests.js';
import { withTracking, type AppRef } from './tracking.js';

export interface DeliveryWriteInput {
  application: AppRef;
  objectsJson: readonly string[];
  cascadeDelete: boolean;
}

export class DeliveredWrites {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      projects: ProjectsService;
      applications: ApplicationsService;
      applicationSets: ApplicationSetsService;
    },
    private readonly validators: Validators,
  ) {}

  /**
   * Projects parents first, then Applications, then ApplicationSets; pruned sets, then pruned
   * Applications, then pruned projects. Returns the verdicts with the sets' outcomes.
   */
  async write(
    as: RequestContext,
    ref: AppRef,
    input: DeliveryWriteInput,
    verdicts: readonly DeliveryVerdict[],
  ): Promise<DeliveryVerdict[]> {
    const objects = input.cascadeDelete ? [] : parseDelivered(input.objectsJson, this.validators).objects;
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
    // The Applications in one transaction, each with the events of its own write.
    await this.deps.applications.writeCheckedAll(
      as,
      objects.flatMap((o) =>
        o.kind === 'Application' && changing.has(`Application:${objectKey(o)}`)
          ? [{ kind: 'put' as const, app: withTracking(o.value, o.kind, ref) }]
          : [],
      ),
    );
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
  async dryRunSets(
    as: RequestContext,
    input: DeliveryWriteInput,
    verdicts: readonly DeliveryVerdict[],
  ): Promise<DeliveryVerdict[]> {
    const objects = input.cascadeDelete ? [] : parseDelivered(input.objectsJson, this.validators).objects;
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
    // Pruned Applications still there (one read), deleted by their own finalizers' rules
    // (cascade undefined), as Argo CD prunes an Application object.
    const stillThere = await findApplications(
      this.deps.db,
      pruned.filter((p) => p.kind === 'Application').map((v) => ({ namespace: v.namespace, name: v.name })),
    );
    const deletes = stillThere.map((a) => ({
      kind: 'delete' as const,
      namespace: a.application.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
      name: a.application.metadata.name,
      cascade: undefined,
    }));
    await this.deps.applications.writeCheckedAll(as, deletes);
    for (const v of pruned.filter((p) => p.kind === 'AppProject'))
      if (await findProject(this.deps.db, v.name)) await this.deps.projects.deleteDelivered(as, v.name);
  }
}
