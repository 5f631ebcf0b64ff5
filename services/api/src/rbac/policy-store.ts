// The RBAC policy in force: Argo CD's built-in roles, the operator's policy.csv (file and inline),
// and every AppProject's roles. Rebuilt when projects change (at once after a write on this replica,
// within the refresh interval for writes on others); each rebuild is a fresh enforcer, so cached
// decisions never outlive the policy they came from. An applied argocd-rbac-cm (policy.csv and its
// policy.<name>.csv overlays, policy.default) replaces rbac.policy-csv and rbac.default-role unless a
// flag or the environment pinned them; its changes are seen the same way (its version is in the stamp).
import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { ValidationError } from '@capstan/service';
import {
  BUILTIN_POLICY_CSV,
  parsePolicyCsv,
  PolicyError,
  projectRoleLines,
  RbacEnforcer,
  type PolicyLine,
} from '@capstan/rbac';
import { argoOverlay, type AppProject } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import { projectRoles } from '../projects/project.validation.js';

export interface PolicyStoreOptions {
  db: Kysely<ApiDatabase>;
  policyFile: string;
  policyCsv: string;
  defaultRole: string;
  /** Set by a flag or the environment: an applied argocd-rbac-cm does not change them. */
  pinned?: { policyCsv: boolean; defaultRole: boolean };
}

export class PolicyStore {
  private enforcer!: RbacEnforcer;
  /** The built-in lines and the policy file's: an applied policy.csv replaces only the inline csv. */
  private readonly baseLines: PolicyLine[];
  private readonly inlineLines: PolicyLine[];
  private stamp = '';
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> = Promise.resolve();

  constructor(private readonly opts: PolicyStoreOptions) {
    try {
      this.baseLines = [
        ...parsePolicyCsv(BUILTIN_POLICY_CSV, 'builtin'),
        ...(opts.policyFile ? parsePolicyCsv(readFileSync(opts.policyFile, 'utf8'), opts.policyFile) : []),
      ];
      this.inlineLines = opts.policyCsv ? parsePolicyCsv(opts.policyCsv, 'rbac.policy-csv') : [];
    } catch (err) {
      if (err instanceof PolicyError) {
        throw new ValidationError(
          err.problems.map((p) => ({ field: p.where, description: p.message })),
          { cause: err },
        );
      }
      throw new ValidationError([
        {
          field: 'rbac.policy-file',
          description: `cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
        },
      ]);
    }
  }

  get current(): RbacEnforcer {
    return this.enforcer;
  }

  async start(refreshMs = 2000): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.refreshIfChanged().catch(() => undefined), refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async currentStamp(): Promise<string> {
    const row = await sql<{ stamp: string }>`
      select coalesce(max(updated_at)::text, '') || '/' || count(*)::text || '/' ||
        (select coalesce(max(version), 0)::text from api.settings where object = 'argocd-rbac-cm') as stamp
        from api.projects`.execute(this.opts.db);
    return row.rows[0]?.stamp ?? '';
  }

  private async refreshIfChanged(): Promise<void> {
    const stamp = await this.currentStamp();
    if (stamp !== this.stamp) await this.reload(stamp);
  }

  /**
   * Rebuilds from the projects projection; reloads run one after another, so the newest wins.
   * `stamp`, when the caller has just read it, is not read again: it was read before the projects
   * are, so a change in between only makes the next refresh rebuild once more.
   */
  reload(stamp?: string): Promise<void> {
    const next = this.reloading.then(() => this.build(stamp));
    this.reloading = next.catch(() => undefined);
    return next;
  }

  private async build(known: string | undefined): Promise<void> {
    const stamp = known ?? (await this.currentStamp());
    const rows = await this.opts.db
      .withSchema('api')
      .selectFrom('projects')
      .select(['name', 'manifest'])
      .orderBy('name')
      .execute();
    const applied = await this.appliedRbac();
    const lines = [...this.baseLines, ...(applied.lines ?? this.inlineLines)];
    for (const row of rows) {
      // Projects were validated at write time; a role that no longer validates is skipped, not fatal.
      lines.push(...projectRoleLines(row.name, projectRoles(row.manifest as AppProject)).lines);
    }
    this.enforcer = await RbacEnforcer.create(lines, {
      defaultRole: applied.defaultRole ?? this.opts.defaultRole,
    });
    this.stamp = stamp;
  }

  /** The latest applied argocd-rbac-cm's policy lines and default role, where not pinned. */
  private async appliedRbac(): Promise<{ lines?: PolicyLine[]; defaultRole?: string }> {
    const row = await this.opts.db
      .withSchema('api')
      .selectFrom('settings')
      .select(['data', 'version'])
      .where('object', '=', 'argocd-rbac-cm')
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row) return {};
    const overlay = argoOverlay({ 'argocd-rbac-cm': row.data }, 'api');
    const csv = overlay.get('rbac.policy-csv');
    const role = overlay.get('rbac.default-role');
    const out: { lines?: PolicyLine[]; defaultRole?: string } = {};
    // Checked when applied (a policy that does not parse is refused then).
    if (csv && !this.opts.pinned?.policyCsv)
      out.lines = parsePolicyCsv(String(csv.value), `argocd-rbac-cm v${row.version}: policy.csv`);
    if (role && !this.opts.pinned?.defaultRole) out.defaultRole = String(role.value);
    return out;
  }
}
