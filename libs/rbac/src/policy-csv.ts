// Argo CD's policy CSV (`p, subject, resource, action, object, effect` and `g, subject, role`),
// parsed with csv-parse (the parser casbin itself uses) so that every line keeps its number: a
// decision names the exact line that made it.
import { parse } from 'csv-parse/sync';
import { cachedGlob, compileGlob, GlobSyntaxError } from '@capstan/glob';

export interface PolicyLine {
  kind: 'p' | 'g';
  /** Everything after the kind: [sub, res, act, obj, eft] for p, [member, role] for g. */
  fields: string[];
  /** Where the line came from: "builtin", "policy.csv", "project:team-a", ... */
  source: string;
  /** 1-based line number within the source. */
  line: number;
  /** The line as written, normalised to ", " separators. */
  text: string;
}

export interface PolicyProblem {
  /** "<source>:<line>" or a field path such as spec.roles[0].policies[1]. */
  where: string;
  message: string;
}

/** Resources Capstan authorises. `logs` and `exec` are accepted so Argo CD policies load unchanged. */
const RESOURCES = [
  'applications',
  'applicationsets',
  'projects',
  'repositories',
  'clusters',
  'accounts',
  'audit',
  // Capstan's own: Argo CD's configuration objects applied through the api (argocd-cm, ...); Argo CD
  // has no RBAC resource for them (they are edited with kubectl).
  'settings',
  'deadletters',
  'certificates',
  'gpgkeys',
  'logs',
  'exec',
  'write-repositories',
] as const;

/**
 * Resources a project role may grant, on objects `<project>/<name>` inside its project. As in Argo
 * CD, repositories and clusters are among them: a project-scoped credential or cluster has the
 * object `<project>/<url>` (an unscoped one just `<url>`, which no project role reaches).
 */
const PROJECT_SCOPED_RESOURCES = new Set([
  'applications',
  'applicationsets',
  'repositories',
  'clusters',
  'logs',
  'exec',
]);

/**
 * Size limits on policy, checked wherever a policy is accepted (tenants write project roles).
 * Patterns are also bounded by @capstan/glob's GLOB_LIMITS (1024 characters, 64 stars, 64
 * alternatives). Together they bound one decision: see the rbac README and bench/src/glob.bench.ts.
 */
export const RBAC_LIMITS = Object.freeze({
  /** Characters in one policy line (a project role's policy, or a line of policy.csv). */
  maxLineLength: 1024,
  /** Policy lines and group bindings all roles of one AppProject contribute together. */
  maxProjectRoleLines: 256,
  /** Characters in all policy lines and group names of one AppProject's roles together. */
  maxProjectRoleChars: 16 * 1024,
  /**
   * Matcher state of all patterns of one AppProject's roles together (@capstan/glob's Glob.size:
   * characters and wildcards after `{a,b}` expansion): what one decision costs per character.
   */
  maxProjectRolePatternSize: 16 * 1024,
  /** Bytes of a policy.csv (the operator's file or inline setting). */
  maxPolicyCsvBytes: 1024 * 1024,
  /** Characters of a request's resource, action or object; longer ones are denied unmatched. */
  maxObjectLength: 1024,
});

export class PolicyError extends Error {
  readonly problems: readonly PolicyProblem[];
  constructor(problems: readonly PolicyProblem[]) {
    super(`invalid rbac policy: ${problems.map((p) => `${p.where}: ${p.message}`).join('; ')}`);
    this.name = 'PolicyError';
    this.problems = problems;
  }
}

const isGlob = (s: string) => /[*?[{]/.test(s);

/** A pattern field that does not compile (or exceeds GLOB_LIMITS), named; undefined when it compiles. */
function patternProblem(field: string, pattern: string): string | undefined {
  try {
    compileGlob(pattern);
    return undefined;
  } catch (err) {
    if (!(err instanceof GlobSyntaxError)) throw err;
    return `${field}: ${err.message}`;
  }
}

function checkLine(kind: string, fields: string[]): string | undefined {
  if (kind === 'p') {
    if (fields.length !== 5)
      return `expected "p, subject, resource, action, object, effect", got ${fields.length + 1} fields`;
    const [sub, res, act, obj, eft] = fields as [string, string, string, string, string];
    if (!sub || !res || !act || !obj) return 'subject, resource, action and object must not be empty';
    if (!isGlob(res) && !(RESOURCES as readonly string[]).includes(res)) {
      return `unknown resource "${res}" (expected one of ${RESOURCES.join(', ')})`;
    }
    if (eft !== 'allow' && eft !== 'deny') return `effect must be allow or deny, got "${eft}"`;
    return patternProblem('resource', res) ?? patternProblem('action', act) ?? patternProblem('object', obj);
  }
  if (kind === 'g') {
    if (fields.length !== 2) return `expected "g, subject, role", got ${fields.length + 1} fields`;
    if (!fields[0] || !fields[1]) return 'subject and role must not be empty';
    return undefined;
  }
  return `a line starts with p or g, got "${kind}"`;
}

/** Parses and validates a policy CSV; every bad line is reported, and none is loaded if any is bad. */
export function parsePolicyCsv(text: string, source: string): PolicyLine[] {
  if (Buffer.byteLength(text, 'utf8') > RBAC_LIMITS.maxPolicyCsvBytes) {
    throw new PolicyError([{ where: source, message: `larger than ${RBAC_LIMITS.maxPolicyCsvBytes} bytes` }]);
  }
  const long = text.split('\n').findIndex((l) => l.length > RBAC_LIMITS.maxLineLength);
  if (long >= 0) {
    throw new PolicyError([
      { where: `${source}:${long + 1}`, message: `longer than ${RBAC_LIMITS.maxLineLength} characters` },
    ]);
  }
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, {
      relax_column_count: true,
      trim: true,
      comment: '#',
      skip_empty_lines: true,
      info: true,
    }) as { record: string[]; info: { lines: number } }[];
  } catch (err) {
    throw new PolicyError([{ where: source, message: `not valid CSV: ${(err as Error).message}` }]);
  }
  const lines: PolicyLine[] = [];
  const problems: PolicyProblem[] = [];
  for (const { record, info } of records) {
    const [kind = '', ...fields] = record;
    const problem = checkLine(kind, fields);
    if (problem) problems.push({ where: `${source}:${info.lines}`, message: problem });
    else lines.push({ kind: kind as 'p' | 'g', fields, source, line: info.lines, text: record.join(', ') });
  }
  if (problems.length > 0) throw new PolicyError(problems);
  return lines;
}

export interface ProjectRoleSpec {
  name: string;
  policies: readonly string[];
  groups: readonly string[];
}

const ROLE_NAME = /^[a-zA-Z0-9]([-_a-zA-Z0-9]*[a-zA-Z0-9])?$/;

/**
 * The policy lines an AppProject's roles contribute, as Argo CD derives them: each role's
 * policies (subject `proj:<project>:<role>`, objects inside the project) and `g, <group>, proj:...`
 * for each group. Returns problems with field paths instead of throwing, for write-time validation.
 */
export function projectRoleLines(
  project: string,
  roles: readonly ProjectRoleSpec[],
): { lines: PolicyLine[]; problems: PolicyProblem[] } {
  const tooBig = projectRoleSizeProblem(roles);
  if (tooBig) return { lines: [], problems: [tooBig] };
  const lines: PolicyLine[] = [];
  const problems: PolicyProblem[] = [];
  const source = `project:${project}`;
  const seen = new Set<string>();
  let patternSize = 0;
  roles.forEach((role, i) => {
    const at = `spec.roles[${i}]`;
    if (!ROLE_NAME.test(role.name)) problems.push({ where: `${at}.name`, message: 'invalid role name' });
    if (seen.has(role.name)) problems.push({ where: `${at}.name`, message: `duplicate role "${role.name}"` });
    seen.add(role.name);
    const subject = `proj:${project}:${role.name}`;
    role.policies.forEach((policy, j) => {
      const where = `${at}.policies[${j}]`;
      let parsed: PolicyLine[];
      try {
        parsed = parsePolicyCsv(policy, source);
      } catch (err) {
        problems.push({ where, message: (err as PolicyError).problems?.[0]?.message ?? 'invalid policy' });
        return;
      }
      const line = parsed[0];
      if (parsed.length !== 1 || !line || line.kind !== 'p') {
        problems.push({ where, message: 'expected exactly one "p, ..." line' });
        return;
      }
      const [sub, res, , obj] = line.fields as [string, string, string, string, string];
      if (sub !== subject) problems.push({ where, message: `subject must be "${subject}"` });
      else if (!PROJECT_SCOPED_RESOURCES.has(res)) {
        problems.push({
          where,
          message: `project roles may only grant ${[...PROJECT_SCOPED_RESOURCES].join(', ')}`,
        });
      } else if (!obj.startsWith(`${project}/`)) {
        problems.push({ where, message: `object must be inside the project ("${project}/...")` });
      } else {
        lines.push({ ...line, line: lines.length + 1 });
        // the line's patterns compiled in parsePolicyCsv
        patternSize += cachedGlob(res).size + cachedGlob(line.fields[2]!).size + cachedGlob(obj).size;
      }
    });
    role.groups.forEach((group, j) => {
      if (!group.trim()) problems.push({ where: `${at}.groups[${j}]`, message: 'group must not be empty' });
      else if (group.length > RBAC_LIMITS.maxLineLength) {
        problems.push({
          where: `${at}.groups[${j}]`,
          message: `longer than ${RBAC_LIMITS.maxLineLength} characters`,
        });
      } else {
        const fields = [group, subject];
        lines.push({ kind: 'g', fields, source, line: lines.length + 1, text: `g, ${fields.join(', ')}` });
      }
    });
  });
  if (patternSize > RBAC_LIMITS.maxProjectRolePatternSize) {
    problems.push({
      where: 'spec.roles',
      message: `patterns that expand to ${patternSize} characters and wildcards, more than the ${RBAC_LIMITS.maxProjectRolePatternSize} a project may have`,
    });
  }
  return { lines, problems };
}

/** The whole of a project's roles over RBAC_LIMITS, checked before any line is parsed. */
function projectRoleSizeProblem(roles: readonly ProjectRoleSpec[]): PolicyProblem | undefined {
  let count = 0;
  let chars = 0;
  for (const role of roles) {
    count += role.policies.length + role.groups.length;
    for (const text of [...role.policies, ...role.groups]) chars += text.length;
  }
  if (count > RBAC_LIMITS.maxProjectRoleLines) {
    return {
      where: 'spec.roles',
      message: `${count} policies and groups, more than the ${RBAC_LIMITS.maxProjectRoleLines} a project may have`,
    };
  }
  if (chars > RBAC_LIMITS.maxProjectRoleChars) {
    return {
      where: 'spec.roles',
      message: `${chars} characters of policies and groups, more than the ${RBAC_LIMITS.maxProjectRoleChars} a project may have`,
    };
  }
  return undefined;
}
