// Which applications a caller may see in a list: RBAC `applications, get` on "<project>/<name>",
// exactly as a get would decide. Most policies grant by project ("team-a/*", "*/*"), and then every
// application of a project gets the same decision; a list therefore decides once per project unless
// some policy line could tell that project's applications apart (a line naming an application, or
// a pattern this module does not analyse), in which case it decides per application.
import { rbacMatch, type PolicyLine, type RbacEnforcer } from '@capstan/rbac';

/** Patterns made of name characters and `*` only; anything else (`?`, `[...]`, `{a,b}`) is not analysed. */
const ANALYSABLE = /^[A-Za-z0-9._:/*-]*$/;

type Reach = 'every' | 'none' | 'some';

/**
 * Whether `pattern` (an Argo CD glob, `*` spanning `/`) matches every object "<project>/<name>",
 * none of them, or possibly some. "every" and "none" are only answered when certain.
 */
export function patternReach(pattern: string, project: string): Reach {
  if (!ANALYSABLE.test(pattern)) return 'some';
  const prefix = `${project}/`;
  const star = pattern.indexOf('*');
  const literal = star < 0 ? pattern : pattern.slice(0, star);
  // Every match starts with the literal head: if it cannot also start with "<project>/", none can.
  if (!literal.startsWith(prefix) && !prefix.startsWith(literal)) return 'none';
  // "<head>*" matches every "<project>/<name>" when <head> matches some start of "<project>/",
  // that is when "<head>*" matches "<project>/" itself (the final star takes the rest): one linear
  // match instead of one per prefix.
  if (pattern.endsWith('*') && rbacMatch(prefix, pattern)) return 'every';
  return 'some';
}

const relevantLines = new WeakMap<RbacEnforcer, readonly string[]>();
const uniformByPolicy = new WeakMap<RbacEnforcer, Map<string, boolean>>();

/** Object patterns of the policy lines that can decide `applications, get` (for any subject). */
function objectPatterns(enforcer: RbacEnforcer): readonly string[] {
  let patterns = relevantLines.get(enforcer);
  if (!patterns) {
    patterns = enforcer.lines
      .filter(
        (l: PolicyLine) =>
          l.kind === 'p' &&
          rbacMatch('applications', l.fields[1] ?? '') &&
          rbacMatch('get', l.fields[2] ?? ''),
      )
      .map((l) => l.fields[3] ?? '');
    relevantLines.set(enforcer, patterns);
  }
  return patterns;
}

/** Whether every application of `project` gets the same `applications, get` decision under this policy. */
export function uniformProject(enforcer: RbacEnforcer, project: string): boolean {
  let byProject = uniformByPolicy.get(enforcer);
  if (!byProject) {
    byProject = new Map();
    uniformByPolicy.set(enforcer, byProject);
  }
  let uniform = byProject.get(project);
  if (uniform === undefined) {
    uniform = objectPatterns(enforcer).every((p) => patternReach(p, project) !== 'some');
    if (byProject.size >= 100_000) byProject.clear();
    byProject.set(project, uniform);
  }
  return uniform;
}

/** One caller's `applications, get` decisions under one policy (a list uses one policy throughout). */
export class ApplicationVisibility {
  private readonly byProject = new Map<string, boolean>();

  constructor(
    private readonly enforcer: RbacEnforcer,
    private readonly principal: { name: string; groups: readonly string[] },
  ) {}

  /** Whether no application of `project` can be shown: the policy denies the whole project. */
  deniesProject(project: string): boolean {
    // Under a uniform decision any name stands for all of the project's applications.
    return uniformProject(this.enforcer, project) && !this.allows(project, '*');
  }

  allows(project: string, name: string): boolean {
    const known = this.byProject.get(project);
    if (known !== undefined) return known;
    const allowed = this.enforcer.enforce(
      { name: this.principal.name, groups: this.principal.groups },
      'applications',
      'get',
      `${project}/${name}`,
    ).allowed;
    if (uniformProject(this.enforcer, project)) this.byProject.set(project, allowed);
    return allowed;
  }
}
