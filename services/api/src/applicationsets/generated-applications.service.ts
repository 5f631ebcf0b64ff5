// ApplicationSetWritesService: the api decides and writes the Applications an ApplicationSet
// generates (the api owns Applications; the appset service only generates them). Everything is
// decided before anything is written, all or nothing:
//  - each generated Application passes exactly the checks of a directly created one (validation and
//    the project chain of ApplicationsService) and RBAC create (new) or update (existing) in its
//    project; owned Applications no longer generated need delete (delete_missing, set deletion);
//  - a set never takes over an Application it does not own (Argo CD's error);
//  - Argo's `applicationsets` policy lines, where an operator wrote them, add denials (appset-policy.ts).
// Every decision is one audit row naming the set and both identities (user via service:appset).
import type { Kysely } from 'kysely';
import { ValidationError, type FieldViolation } from '@capstan/service';
import type { Application, AppProject } from '@capstan/policy';
import type { Decision } from '@capstan/rbac';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { PolicyStore } from '../rbac/policy-store.js';
import type { RequestContext } from '../support/request.js';
import type { ApplicationsService, CheckedWrite } from '../applications/applications.service.js';
import type { StoredApplication } from '../applications/application.repository.js';
import { sameManifest } from '../support/canonical.js';
import { invalid } from '../support/validation.js';
import { isOwnedBy, parseSetRef, takeOverRefusal, withSetOwner, type SetRef } from './ownership.js';
import { findByNames, findOwnedApplications } from './owned-applications.repository.js';
import { applicationSetLinesRefusal } from './appset-policy.js';
import { requireAppsetDelegation } from './appset-caller.js';

export type VerdictAction = 'create' | 'update' | 'delete' | 'unchanged';

export interface Verdict {
  name: string;
  namespace: string;
  project: string;
  action: VerdictAction;
  allowed: boolean;
  reason: string;
}

export interface ApplyGeneratedInput {
  applicationSet: string;
  applicationsJson: readonly string[];
  dryRun: boolean;
  allowUpdate: boolean;
  deleteMissing: boolean;
  deleteAll: boolean;
  preserveResources: boolean;
}

/**
 * One decided Application: its verdict, what writing it means, and the audit row of the decision
 * (none when nothing was decided: an unchanged Application in a background reconcile).
 */
interface Plan {
  verdict: Verdict;
  write?: { kind: 'put'; app: Application } | { kind: 'delete' };
  audit?: { resource: string; action: string; object: string; decision: Decision };
}

const lineOf = (d: Decision) => (d.line ? `${d.line.source}:${d.line.line}: ${d.line.text}` : d.reason);

export class GeneratedApplicationsService {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      authz: Authorizer;
      policy: PolicyStore;
      applications: ApplicationsService;
    },
  ) {}

  /**
   * Validates every generated Application as a directly created one, in the set's namespace, with
   * unique names; all problems of all Applications in one error, each path naming its Application.
   */
  private parseGenerated(json: readonly string[], set: SetRef): Application[] {
    const violations: FieldViolation[] = [];
    const out: Application[] = [];
    const seen = new Set<string>();
    json.forEach((text, i) => {
      const at = `applications_json[${i}]`;
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        violations.push({ field: at, description: 'is not JSON' });
        return;
      }
      const meta = (raw as { metadata?: { namespace?: unknown } } | null)?.metadata;
      if (meta && typeof meta === 'object' && meta.namespace === undefined)
        raw = { ...(raw as object), metadata: { ...meta, namespace: set.namespace } };
      try {
        const app = this.deps.applications.validate(raw, at);
        if (app.metadata.namespace !== set.namespace)
          violations.push({
            field: `${at}.metadata.namespace`,
            description: `must be the ApplicationSet's namespace (${set.namespace})`,
          });
        if (seen.has(app.metadata.name))
          violations.push({
            field: `${at}.metadata.name`,
            description: `ApplicationSet ${set.name} contains applications with duplicate name: ${app.metadata.name}`,
          });
        seen.add(app.metadata.name);
        out.push(app);
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        violations.push(...err.violations);
      }
    });
    if (violations.length > 0) throw new ValidationError(violations);
    return out;
  }

  /** RBAC on `<project>/<name>`, then the `applicationsets` lines; the first refusal decides. */
  private decide(ctx: RequestContext, set: SetRef, action: string, project: string, name: string): Decision {
    const enforcer = this.deps.policy.current;
    const object = `${project}/${name}`;
    const d = this.deps.authz.decide(ctx.principal, 'applications', action, object);
    if (!d.allowed)
      return { ...d, reason: `permission denied: applications, ${action}, ${object}: ${d.reason}` };
    const extra = applicationSetLinesRefusal(enforcer, ctx.principal, action, project, set);
    if (extra)
      return {
        ...extra,
        reason: `permission denied: applicationsets, ${action}, ${extra.object}: ${extra.reason}`,
      };
    return { ...d, reason: lineOf(d) };
  }

  /**
   * One Application's verdict: the RBAC checks in order (the first refusal decides), plus the
   * project rule or ownership problems; allowed only when none refuses.
   */
  private plan(
    ctx: RequestContext,
    set: SetRef,
    p: {
      app: { name: string; project: string };
      action: VerdictAction;
      rbac: { action: string; project: string }[];
      problems?: string[];
      write?: Plan['write'];
    },
  ): Plan {
    const { app, action, rbac, problems = [], write } = p;
    let decision: Decision = { allowed: true, reason: 'nothing to decide' };
    for (const r of rbac) {
      decision = this.decide(ctx, set, r.action, r.project, app.name);
      if (!decision.allowed) break;
    }
    const refusals = [...(decision.allowed ? [] : [decision.reason]), ...problems];
    const allowed = refusals.length === 0;
    const reason = allowed ? (rbac.length > 0 ? decision.reason : (problems[0] ?? '')) : refusals.join('; ');
    const rbacAction = rbac[0]?.action ?? action;
    return {
      verdict: { name: app.name, namespace: set.namespace, project: app.project, action, allowed, reason },
      ...(allowed && write ? { write } : {}),
      ...(rbac.length === 0 && problems.length === 0
        ? {}
        : {
            audit: {
              resource: 'applications',
              action: rbacAction,
              object: `${app.project}/${app.name}`,
              decision: {
                ...decision,
                allowed,
                reason: `applicationset ${set.namespace}/${set.name}: ${action}: ${allowed ? reason || 'allowed' : refusals.join('; ')}`,
              },
            },
          }),
    };
  }

  /** The decision for one generated Application against what exists today. */
  private async planGenerated(
    ctx: RequestContext,
    set: SetRef,
    app: Application,
    existing: StoredApplication | undefined,
    projects: Map<string, AppProject>,
    input: ApplyGeneratedInput,
  ): Promise<Plan> {
    const name = app.metadata.name;
    const stamped = withSetOwner(app, set);
    const userWrite = ctx.principal.delegation?.kind === 'user';
    if (existing && !isOwnedBy(existing.application, set))
      return this.plan(ctx, set, {
        app: { name, project: app.spec.project },
        action: 'update',
        rbac: [],
        problems: [takeOverRefusal(existing.application, set)],
      });
    const rules = async () =>
      (await this.deps.applications.projectViolations(stamped, { projects })).map(
        (v) => `${v.field}: ${v.description}`,
      );
    if (!existing)
      return this.plan(ctx, set, {
        app: { name, project: app.spec.project },
        action: 'create',
        rbac: [{ action: 'create', project: app.spec.project }],
        problems: await rules(),
        write: { kind: 'put', app: stamped },
      });
    const kept = sameManifest(existing.application, stamped) || !input.allowUpdate;
    if (kept)
      // Nothing is written. A user's change of the set still needs rights over every Application
      // it owns today; a background reconcile that changes nothing decides nothing.
      return this.plan(ctx, set, {
        app: { name, project: existing.project },
        action: 'unchanged',
        rbac: userWrite ? [{ action: 'update', project: existing.project }] : [],
      });
    const rbac = [{ action: 'update', project: existing.project }];
    if (existing.project !== app.spec.project) rbac.push({ action: 'update', project: app.spec.project });
    return this.plan(ctx, set, {
      app: { name, project: app.spec.project },
      action: 'update',
      rbac,
      problems: await rules(),
      write: { kind: 'put', app: stamped },
    });
  }

  async apply(
    ctx: RequestContext,
    input: ApplyGeneratedInput,
  ): Promise<{ applications: Verdict[]; applied: boolean }> {
    const set = parseSetRef(input.applicationSet);
    await requireAppsetDelegation(this.deps.authz, ctx, 'ApplicationSetWritesService.Apply', set);
    if (input.deleteAll && input.applicationsJson.length > 0)
      throw invalid('applications_json', 'must be empty when delete_all is set');
    const generated = this.parseGenerated(input.applicationsJson, set);
    const owned = await findOwnedApplications(this.deps.db, set);
    const existing = await findByNames(
      this.deps.db,
      set.namespace,
      generated.map((a) => a.metadata.name),
    );
    const projects = await this.deps.applications.projectsByName();
    const plans: Plan[] = [];
    for (const app of generated)
      plans.push(await this.planGenerated(ctx, set, app, existing.get(app.metadata.name), projects, input));
    const names = new Set(generated.map((a) => a.metadata.name));
    for (const app of owned) {
      if (names.has(app.name)) continue;
      if (input.deleteAll || input.deleteMissing)
        plans.push(
          this.plan(ctx, set, {
            app,
            action: 'delete',
            rbac: [{ action: 'delete', project: app.project }],
            write: { kind: 'delete' },
          }),
        );
      else if (ctx.principal.delegation?.kind === 'user')
        // Kept, but a user's change of the set needs rights over everything it owns today.
        plans.push(
          this.plan(ctx, set, {
            app,
            action: 'unchanged',
            rbac: [{ action: 'update', project: app.project }],
          }),
        );
    }
    await this.deps.authz.recordAll(
      ctx.principal,
      ctx.via,
      plans.flatMap((p) => (p.audit ? [p.audit] : [])),
    );
    const applications = plans.map((p) => p.verdict).sort((a, b) => a.name.localeCompare(b.name));
    if (input.dryRun || applications.some((v) => !v.allowed)) return { applications, applied: false };
    await this.write(ctx, set, plans, input.preserveResources);
    return { applications, applied: true };
  }

  /** Every decided write in one transaction (all or nothing), each Application with its own events. */
  private async write(ctx: RequestContext, set: SetRef, plans: Plan[], preserve: boolean): Promise<void> {
    await this.deps.applications.writeCheckedAll(
      ctx,
      plans.flatMap((p): CheckedWrite[] => {
        if (!p.write) return [];
        if (p.write.kind === 'put') return [{ kind: 'put', app: p.write.app }];
        return [{ kind: 'delete', namespace: set.namespace, name: p.verdict.name, cascade: !preserve }];
      }),
    );
  }
}
