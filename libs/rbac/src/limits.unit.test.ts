// Tenant-written policy is bounded: patterns that do not compile or exceed the glob limits, lines
// too long, projects with too many or too large roles are refused with the field that is wrong;
// and the pattern that pinned the api (issue 10) decides at once.
import { describe, expect, it } from 'vitest';
import { GLOB_LIMITS } from '@capstan/glob';
import { RbacEnforcer } from './enforcer.js';
import { parsePolicyCsv, PolicyError, projectRoleLines, RBAC_LIMITS } from './policy-csv.js';

const PATHOLOGICAL = '*a*a*a*a*a*a*a*a*a*a*a*b';

function problemsOf(csv: string): { where: string; message: string }[] {
  try {
    parsePolicyCsv(csv, 'policy.csv');
  } catch (err) {
    if (err instanceof PolicyError) return [...err.problems];
    throw err;
  }
  return [];
}

describe('policy patterns are checked when written', () => {
  it('given patterns that do not compile, when parsed, then each line is refused naming the field', () => {
    expect(
      problemsOf(
        [
          'p, alice, applications, get, team-a/[abc, allow',
          'p, alice, applications, {get, team-a/x, allow',
          'p, alice, applications, get, team-a/[a-z0-9], allow',
        ].join('\n'),
      ),
    ).toEqual([
      { where: 'policy.csv:1', message: 'object: invalid glob "team-a/[abc": unclosed "["' },
      { where: 'policy.csv:2', message: 'action: invalid glob "{get": unclosed "{"' },
      {
        where: 'policy.csv:3',
        message: 'object: invalid glob "team-a/[a-z0-9]": expected "]" after a range',
      },
    ]);
  });

  it('given a pattern over the star limit, when parsed, then it is refused', () => {
    const obj = `team-a/${'*a'.repeat(GLOB_LIMITS.maxStars + 1)}`;
    expect(problemsOf(`p, alice, applications, get, ${obj}, allow`)[0]?.message).toMatch(
      /^object: invalid glob ".*…": more than 64 "\*"$/,
    );
  });

  it('given a line over the length limit or a policy.csv over the size limit, when parsed, then it is refused', () => {
    const long = `p, alice, applications, get, team-a/${'x'.repeat(RBAC_LIMITS.maxLineLength)}, allow`;
    expect(problemsOf(`\n${long}`)).toEqual([
      { where: 'policy.csv:2', message: 'longer than 1024 characters' },
    ]);
    const big = 'p, alice, applications, get, team-a/x, allow\n'.repeat(RBAC_LIMITS.maxPolicyCsvBytes / 40);
    expect(problemsOf(big)).toEqual([{ where: 'policy.csv', message: 'larger than 1048576 bytes' }]);
  });
});

describe('project roles are bounded', () => {
  const policy = (n: number) => `p, proj:team-a:r, applications, get, team-a/app-${n}, allow`;

  it('given more policies and groups than the limit, when derived, then spec.roles is refused and no line is derived', () => {
    const policies = Array.from({ length: RBAC_LIMITS.maxProjectRoleLines }, (_, i) => policy(i));
    expect(projectRoleLines('team-a', [{ name: 'r', policies, groups: [] }]).problems).toEqual([]);
    const over = projectRoleLines('team-a', [{ name: 'r', policies, groups: ['one-more'] }]);
    expect(over.lines).toEqual([]);
    expect(over.problems).toEqual([
      { where: 'spec.roles', message: '257 policies and groups, more than the 256 a project may have' },
    ]);
  });

  it('given roles over the character limit, when derived, then spec.roles is refused', () => {
    const padded = `p, proj:team-a:r, applications, get, team-a/${'x'.repeat(900)}, allow`;
    const policies = Array.from({ length: 20 }, () => padded);
    const { problems } = projectRoleLines('team-a', [{ name: 'r', policies, groups: [] }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ where: 'spec.roles' });
    expect(problems[0]?.message).toMatch(/characters of policies and groups, more than the 16384/);
  });

  it('given one policy or group over the line limit, when derived, then its own path is named', () => {
    const { problems } = projectRoleLines('team-a', [
      {
        name: 'r',
        policies: [policy(1), `p, proj:team-a:r, applications, get, team-a/${'x'.repeat(1024)}, allow`],
        groups: ['g'.repeat(1025)],
      },
    ]);
    expect(problems).toEqual([
      { where: 'spec.roles[0].policies[1]', message: 'longer than 1024 characters' },
      { where: 'spec.roles[0].groups[0]', message: 'longer than 1024 characters' },
    ]);
  });
});

describe('the pattern of issue 10', () => {
  it("given a project role with *a*a*a*a*a*a*a*a*a*a*a*b, when a member asks about 60 a's, then it decides, and correctly", async () => {
    const { lines, problems } = projectRoleLines('team-a', [
      {
        name: 'r',
        policies: [`p, proj:team-a:r, applications, get, team-a/${PATHOLOGICAL}, allow`],
        groups: ['tenant-a'],
      },
    ]);
    expect(problems).toEqual([]);
    const e = await RbacEnforcer.create(lines);
    const member = { name: 'mallory', groups: ['tenant-a'] };
    expect(e.enforce(member, 'applications', 'get', `team-a/${'a'.repeat(60)}`).allowed).toBe(false);
    expect(e.enforce(member, 'applications', 'get', `team-a/${'a'.repeat(4096)}`).allowed).toBe(false);
    expect(e.enforce(member, 'applications', 'get', `team-a/${'a'.repeat(59)}b`).allowed).toBe(true);
    expect(e.enforce(member, 'applications', 'get', `team-a/${'a'.repeat(10)}b`).allowed).toBe(false);
  });
});

describe('the matching cost of a project is bounded after expansion', () => {
  it('given few short lines whose {a,b} groups expand past the pattern budget, when derived, then spec.roles is refused', () => {
    // each object expands to 64 alternatives of 56 units (3648 states): 4 lines fit, 5 do not
    const obj = (i: number) => `team-a/${'{a,?}'.repeat(6)}${'*a'.repeat(20)}*${i}b`;
    const policies = (n: number) =>
      Array.from({ length: n }, (_, i) => `p, proj:team-a:r, applications, get, "${obj(i)}", allow`);
    expect(projectRoleLines('team-a', [{ name: 'r', policies: policies(3), groups: [] }]).problems).toEqual(
      [],
    );
    const { problems } = projectRoleLines('team-a', [{ name: 'r', policies: policies(5), groups: [] }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ where: 'spec.roles' });
    expect(problems[0]?.message).toMatch(
      /^patterns that expand to \d+ characters and wildcards, more than the 16384/,
    );
  });
});
