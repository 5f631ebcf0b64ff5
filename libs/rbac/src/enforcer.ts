// Evaluates Argo CD RBAC with casbin and says which policy line decided. A principal is a name plus
// groups (local account groups, project role bindings); each is a casbin subject, as in Argo CD.
// Capstan differs from Argo CD in one place on purpose: an explicit deny for the principal also
// beats the default role (Argo CD consults the default role first and lets it allow).
import { newEnforcer, newModelFromString, type Enforcer } from 'casbin';
import { globMatch } from './glob.js';
import { RBAC_MODEL } from './model.js';
import type { PolicyLine } from './policy-csv.js';

export interface Principal {
  name: string;
  groups?: readonly string[];
}

export interface Decision {
  allowed: boolean;
  /** The policy line that decided (the deny that refused, or the allow that granted); none when nothing matched. */
  line?: PolicyLine;
  /** The subject (user, group or default role) the deciding line applied to. */
  subject?: string;
  reason: string;
}

export interface EnforcerOptions {
  /** Argo CD's policy.default, e.g. "role:readonly"; "" for none (deny unless allowed). */
  defaultRole?: string;
  /** Decisions remembered until the policy changes (a new RbacEnforcer). */
  cacheSize?: number;
}

const key = (fields: readonly string[]) => fields.join('\u0000');

export class RbacEnforcer {
  private readonly cache = new Map<string, Decision>();

  private constructor(
    private readonly casbin: Enforcer,
    private readonly byRule: Map<string, PolicyLine>,
    readonly lines: readonly PolicyLine[],
    private readonly defaultRole: string,
    private readonly cacheSize: number,
  ) {}

  static async create(lines: readonly PolicyLine[], options: EnforcerOptions = {}): Promise<RbacEnforcer> {
    const casbin = await newEnforcer(newModelFromString(RBAC_MODEL));
    casbin.addFunction('argoGlob', (value: string, pattern: string) => globMatch(value, pattern));
    // casbin refuses a batch holding a rule it already has, so duplicates are dropped first; the
    // first occurrence is the line a decision names.
    const byRule = new Map<string, PolicyLine>();
    const policies: string[][] = [];
    const groupings: string[][] = [];
    for (const line of lines) {
      const k = `${line.kind}\u0000${key(line.fields)}`;
      if (byRule.has(k)) continue;
      byRule.set(k, line);
      (line.kind === 'p' ? policies : groupings).push([...line.fields]);
    }
    if (policies.length > 0) await casbin.addPolicies(policies);
    if (groupings.length > 0) await casbin.addGroupingPolicies(groupings);
    return new RbacEnforcer(casbin, byRule, lines, options.defaultRole ?? '', options.cacheSize ?? 100_000);
  }

  enforce(principal: Principal, resource: string, action: string, object: string): Decision {
    const groups = principal.groups ?? [];
    const cacheKey = key([principal.name, ...groups, '', resource, action, object]);
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;
    const decision = this.evaluate([principal.name, ...groups], resource, action, object);
    if (this.cache.size >= this.cacheSize) this.cache.clear();
    this.cache.set(cacheKey, decision);
    return decision;
  }

  /** Whether the principal holds `role` directly, through a group, or through role nesting. */
  hasRole(principal: Principal, role: string): boolean {
    return [principal.name, ...(principal.groups ?? [])].some((s) => s === role || this.rolesOf(s).has(role));
  }

  private rolesOf(subject: string): Set<string> {
    const out = new Set<string>();
    const queue = [subject];
    while (queue.length > 0) {
      const s = queue.pop()!;
      for (const line of this.byRule.values()) {
        const [member, role] = line.fields;
        if (line.kind === 'g' && member === s && role !== undefined && !out.has(role)) {
          out.add(role);
          queue.push(role);
        }
      }
    }
    return out;
  }

  private evaluate(subjects: readonly string[], resource: string, action: string, object: string): Decision {
    let granted: Decision | undefined;
    for (const subject of subjects) {
      const [ok, rule] = this.casbin.enforceExSync(subject, resource, action, object);
      if (!ok && rule.length > 0) {
        return { allowed: false, line: this.byRule.get(`p\u0000${key(rule)}`), subject, reason: 'denied by policy' };
      }
      if (ok && !granted) {
        granted = { allowed: true, line: this.byRule.get(`p\u0000${key(rule)}`), subject, reason: 'allowed by policy' };
      }
    }
    if (granted) return granted;
    if (this.defaultRole) {
      const [ok, rule] = this.casbin.enforceExSync(this.defaultRole, resource, action, object);
      const line = rule.length > 0 ? this.byRule.get(`p\u0000${key(rule)}`) : undefined;
      if (ok) return { allowed: true, line, subject: this.defaultRole, reason: 'allowed by the default role' };
    }
    return { allowed: false, reason: 'no policy line allows' };
  }
}
