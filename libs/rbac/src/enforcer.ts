// Evaluates Argo CD RBAC with casbin and says which policy line decided. A principal is a name plus
// groups (local account groups, project role bindings); each is a casbin subject, as in Argo CD.
// Capstan differs from Argo CD in one place on purpose: an explicit deny for the principal also
// beats the default role (Argo CD consults the default role first and lets it allow).
import { newEnforcer, newModelFromString, type Enforcer } from 'casbin';
import { rbacMatch } from './glob.js';
import { RBAC_MODEL } from './model.js';
import { RBAC_LIMITS, type PolicyLine } from './policy-csv.js';

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

/**
 * casbin evaluates every policy line for every request, so with a 1,000-line policy one decision
 * costs milliseconds. Lines are therefore grouped by subject, one casbin enforcer per subject: a
 * request evaluates only the lines of the subjects it reaches through `g` (its roles, their roles),
 * which gives the same answer as one enforcer over the whole policy (allow if some reached line
 * allows and none denies) at the cost of the few lines that can apply.
 */
export class RbacEnforcer {
  private readonly cache = new Map<string, Decision>();
  private readonly closures = new Map<string, readonly string[]>();

  private constructor(
    private readonly bySubject: Map<string, Enforcer>,
    private readonly byRule: Map<string, PolicyLine>,
    private readonly roles: Map<string, string[]>,
    readonly lines: readonly PolicyLine[],
    private readonly defaultRole: string,
    private readonly cacheSize: number,
  ) {}

  static async create(lines: readonly PolicyLine[], options: EnforcerOptions = {}): Promise<RbacEnforcer> {
    // The first occurrence of a duplicated line is the one a decision names.
    const byRule = new Map<string, PolicyLine>();
    const policies = new Map<string, string[][]>();
    const roles = new Map<string, string[]>();
    for (const line of lines) {
      const k = `${line.kind}\u0000${key(line.fields)}`;
      if (byRule.has(k)) continue;
      byRule.set(k, line);
      const [subject, second] = line.fields as [string, string];
      if (line.kind === 'p') policies.set(subject, [...(policies.get(subject) ?? []), [...line.fields]]);
      else roles.set(subject, [...(roles.get(subject) ?? []), second]);
    }
    const bySubject = new Map<string, Enforcer>();
    for (const [subject, rules] of policies) {
      const casbin = await newEnforcer(newModelFromString(RBAC_MODEL));
      casbin.addFunction('argoGlob', rbacMatch);
      await casbin.addPolicies(rules);
      bySubject.set(subject, casbin);
    }
    return new RbacEnforcer(
      bySubject,
      byRule,
      roles,
      lines,
      options.defaultRole ?? '',
      options.cacheSize ?? 100_000,
    );
  }

  enforce(principal: Principal, resource: string, action: string, object: string): Decision {
    // Matching is linear in pattern × value; the values are bounded here, the patterns at write time.
    const max = RBAC_LIMITS.maxObjectLength;
    if (resource.length > max || action.length > max || object.length > max) {
      return { allowed: false, reason: `resource, action or object longer than ${max} characters` };
    }
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
    return [principal.name, ...(principal.groups ?? [])].some((s) => this.closure(s).includes(role));
  }

  /** The subject and every role it reaches through `g` lines. */
  private closure(subject: string): readonly string[] {
    const hit = this.closures.get(subject);
    if (hit) return hit;
    const out = [subject];
    const seen = new Set(out);
    for (let i = 0; i < out.length; i++) {
      for (const role of this.roles.get(out[i]!) ?? []) {
        if (!seen.has(role)) {
          seen.add(role);
          out.push(role);
        }
      }
    }
    if (this.closures.size > 100_000) this.closures.clear();
    this.closures.set(subject, out);
    return out;
  }

  /** Deny wins over allow across every line the subject reaches; undefined when no line matches. */
  private evaluateSubject(
    subject: string,
    resource: string,
    action: string,
    object: string,
  ): Decision | undefined {
    let granted: Decision | undefined;
    for (const reached of this.closure(subject)) {
      const casbin = this.bySubject.get(reached);
      if (!casbin) continue;
      const [ok, rule] = casbin.enforceExSync(reached, resource, action, object);
      if (rule.length === 0) continue;
      const line = this.byRule.get(`p\u0000${key(rule)}`);
      if (!ok) return { allowed: false, line, subject, reason: 'denied by policy' };
      granted ??= { allowed: true, line, subject, reason: 'allowed by policy' };
    }
    return granted;
  }

  private evaluate(subjects: readonly string[], resource: string, action: string, object: string): Decision {
    let granted: Decision | undefined;
    for (const subject of subjects) {
      const d = this.evaluateSubject(subject, resource, action, object);
      if (d && !d.allowed) return d;
      granted ??= d;
    }
    if (granted) return granted;
    if (this.defaultRole) {
      const d = this.evaluateSubject(this.defaultRole, resource, action, object);
      if (d?.allowed) return { ...d, reason: 'allowed by the default role' };
    }
    return { allowed: false, reason: 'no policy line allows' };
  }
}
