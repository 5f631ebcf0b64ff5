import { describe, expect, it } from 'vitest';
import { BUILTIN_POLICY_CSV } from './builtin-policy.js';
import { RbacEnforcer } from './enforcer.js';
import { rbacMatch } from './glob.js';
import { parsePolicyCsv, PolicyError, projectRoleLines } from './policy-csv.js';

const POLICY = `
# tenants
p, role:team-a, applications, *, team-a/*, allow
p, role:team-a, applications, delete, team-a/prod-*, deny
p, role:team-a, projects, get, team-a, allow
g, alice, role:team-a
g, team-a-devs, role:team-a
p, bob, clusters, get, https://*.example.com, allow
`;

async function enforcer(csv = POLICY, defaultRole = '') {
  return RbacEnforcer.create(
    [...parsePolicyCsv(BUILTIN_POLICY_CSV, 'builtin'), ...parsePolicyCsv(csv, 'policy.csv')],
    {
      defaultRole,
    },
  );
}

describe('rbacMatch', () => {
  it('lets * span slashes, dots and colons as Argo CD does', () => {
    expect(rbacMatch('team-a/guestbook', 'team-a/*')).toBe(true);
    expect(rbacMatch('team-a/guestbook', '*')).toBe(true);
    expect(rbacMatch('team-a/guestbook', '*/guestbook')).toBe(true);
    expect(rbacMatch('https://kubernetes.default.svc', 'https://*')).toBe(true);
    expect(rbacMatch('team-b/guestbook', 'team-a/*')).toBe(false);
    expect(rbacMatch('team-a', 'team-?')).toBe(true);
    expect(rbacMatch('team-c', 'team-{a,b}')).toBe(false);
    expect(rbacMatch('team-b', 'team-[ab]')).toBe(true);
    expect(rbacMatch('', '')).toBe(true);
    expect(rbacMatch('x', '')).toBe(false);
  });
});

describe('policy CSV', () => {
  it('keeps line numbers and rejects every bad line at once', () => {
    const lines = parsePolicyCsv(POLICY, 'policy.csv');
    expect(lines[0]).toMatchObject({
      kind: 'p',
      line: 3,
      text: 'p, role:team-a, applications, *, team-a/*, allow',
    });
    try {
      parsePolicyCsv(
        'p, a, applications, get, x/y\ng, only\np, a, widgets, get, x, allow\np, a, clusters, get, x, maybe',
        'f',
      );
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(PolicyError);
      expect((err as PolicyError).problems.map((p) => p.where)).toEqual(['f:1', 'f:2', 'f:3', 'f:4']);
      expect((err as PolicyError).problems[2]?.message).toMatch(/unknown resource "widgets"/);
      expect((err as PolicyError).problems[3]?.message).toMatch(/effect must be allow or deny/);
    }
  });
});

describe('RbacEnforcer', () => {
  it('allows through a role and names the line', async () => {
    const e = await enforcer();
    const d = e.enforce({ name: 'alice' }, 'applications', 'sync', 'team-a/guestbook');
    expect(d).toMatchObject({ allowed: true, subject: 'alice' });
    expect(d.line).toMatchObject({ source: 'policy.csv', line: 3 });
  });

  it('denies outside the granted project, naming no line', async () => {
    const d = (await enforcer()).enforce({ name: 'alice' }, 'applications', 'sync', 'team-b/guestbook');
    expect(d).toEqual({ allowed: false, reason: 'no policy line allows' });
  });

  it('lets a deny win over an allow and over the default role', async () => {
    const e = await enforcer(
      POLICY + 'p, role:readonly, applications, delete, */*, allow\n',
      'role:readonly',
    );
    const d = e.enforce({ name: 'alice' }, 'applications', 'delete', 'team-a/prod-web');
    expect(d.allowed).toBe(false);
    expect(d.line).toMatchObject({
      line: 4,
      fields: ['role:team-a', 'applications', 'delete', 'team-a/prod-*', 'deny'],
    });
  });

  it('grants through groups and falls back to the default role', async () => {
    const e = await enforcer(POLICY, 'role:readonly');
    expect(
      e.enforce({ name: 'carol', groups: ['team-a-devs'] }, 'applications', 'create', 'team-a/x').allowed,
    ).toBe(true);
    const viaDefault = e.enforce({ name: 'carol' }, 'applications', 'get', 'team-b/x');
    expect(viaDefault).toMatchObject({
      allowed: true,
      subject: 'role:readonly',
      reason: 'allowed by the default role',
    });
    expect(e.enforce({ name: 'carol' }, 'applications', 'create', 'team-b/x').allowed).toBe(false);
  });

  it('treats the admin as admin through the builtin policy, and knows role membership', async () => {
    const e = await enforcer();
    expect(e.enforce({ name: 'admin' }, 'projects', 'update', 'team-a').allowed).toBe(true);
    expect(e.hasRole({ name: 'admin' }, 'role:admin')).toBe(true);
    expect(e.hasRole({ name: 'admin' }, 'role:readonly')).toBe(true);
    expect(e.hasRole({ name: 'alice' }, 'role:admin')).toBe(false);
  });

  it('matches globbed objects in non-application resources', async () => {
    const e = await enforcer();
    expect(e.enforce({ name: 'bob' }, 'clusters', 'get', 'https://prod.example.com').allowed).toBe(true);
    expect(e.enforce({ name: 'bob' }, 'clusters', 'get', 'https://prod.example.org').allowed).toBe(false);
  });
});

describe('project roles', () => {
  it('derive policy and group lines that grant inside the project only', async () => {
    const { lines, problems } = projectRoleLines('team-a', [
      {
        name: 'developer',
        policies: ['p, proj:team-a:developer, applications, *, team-a/*, allow'],
        groups: ['tenant-a'],
      },
    ]);
    expect(problems).toEqual([]);
    const e = await RbacEnforcer.create(lines);
    expect(
      e.enforce({ name: 'dave', groups: ['tenant-a'] }, 'applications', 'sync', 'team-a/web').line?.source,
    ).toBe('project:team-a');
    expect(
      e.enforce({ name: 'dave', groups: ['tenant-a'] }, 'applications', 'sync', 'team-b/web').allowed,
    ).toBe(false);
  });

  it('grant project-scoped repositories and clusters as Argo CD project roles do', async () => {
    const { lines, problems } = projectRoleLines('team-a', [
      {
        name: 'admin',
        policies: [
          'p, proj:team-a:admin, repositories, create, team-a/*, allow',
          'p, proj:team-a:admin, repositories, update, team-a/*, allow',
          'p, proj:team-a:admin, clusters, get, team-a/*, allow',
        ],
        groups: ['tenant-a'],
      },
    ]);
    expect(problems).toEqual([]);
    const e = await RbacEnforcer.create(lines);
    const dave = { name: 'dave', groups: ['tenant-a'] };
    const url = 'https://git.example.com/team-a/apps.git';
    expect(e.enforce(dave, 'repositories', 'create', `team-a/${url}`).allowed).toBe(true);
    expect(e.enforce(dave, 'repositories', 'update', `team-a/${url}`).allowed).toBe(true);
    // Another project's credential, and an unscoped one (object: the bare URL), stay out of reach.
    expect(e.enforce(dave, 'repositories', 'update', `team-b/${url}`).allowed).toBe(false);
    expect(e.enforce(dave, 'repositories', 'update', url).allowed).toBe(false);
    expect(e.enforce(dave, 'repositories', 'delete', `team-a/${url}`).allowed).toBe(false);
    expect(e.enforce(dave, 'clusters', 'get', 'team-a/https://10.0.0.1:6443').allowed).toBe(true);
    expect(e.enforce(dave, 'clusters', 'get', 'https://10.0.0.1:6443').allowed).toBe(false);
    const outside = projectRoleLines('team-a', [
      { name: 'x', policies: ['p, proj:team-a:x, repositories, create, *, allow'], groups: [] },
    ]);
    expect(outside.problems.map((p) => p.message)).toEqual([
      'object must be inside the project ("team-a/...")',
    ]);
  });

  it('refuse policies that reach outside the project, with field paths', () => {
    const { problems } = projectRoleLines('team-a', [
      {
        name: 'dev',
        policies: [
          'p, proj:team-a:dev, applications, *, team-b/*, allow',
          'p, proj:team-b:dev, applications, get, team-a/*, allow',
          'p, proj:team-a:dev, projects, update, team-a, allow',
        ],
        groups: [''],
      },
    ]);
    expect(problems.map((p) => p.where)).toEqual([
      'spec.roles[0].policies[0]',
      'spec.roles[0].policies[1]',
      'spec.roles[0].policies[2]',
      'spec.roles[0].groups[0]',
    ]);
  });
});

describe('subject-partitioned evaluation', () => {
  it('answers exactly as one casbin enforcer over the whole policy', async () => {
    const { newEnforcer, newModelFromString } = await import('casbin');
    const { RBAC_MODEL } = await import('./model.js');
    const lines: string[] = [];
    for (let r = 0; r < 12; r++) {
      lines.push(
        `p, role:t${r}, applications, *, t${r}/*, allow`,
        `p, role:t${r}, applications, delete, t${r}/prod-*, deny`,
      );
      lines.push(`p, role:t${r}, clusters, get, https://c${r}.*, allow`);
      lines.push(`g, group-${r}, role:t${r}`);
      if (r % 2 === 0) lines.push(`g, role:t${r}, role:t${r + 1}`);
    }
    lines.push('p, group-3, applications, sync, t5/*, deny');
    const parsed = [
      ...parsePolicyCsv(BUILTIN_POLICY_CSV, 'builtin'),
      ...parsePolicyCsv(lines.join('\n'), 'p'),
    ];
    const ours = await RbacEnforcer.create(parsed);
    const whole = await newEnforcer(newModelFromString(RBAC_MODEL));
    whole.addFunction('argoGlob', rbacMatch);
    await whole.addPolicies(parsed.filter((l) => l.kind === 'p').map((l) => l.fields));
    await whole.addGroupingPolicies(parsed.filter((l) => l.kind === 'g').map((l) => l.fields));
    const actions = ['get', 'sync', 'delete', 'create'];
    let disagreements = 0;
    let allowed = 0;
    for (let i = 0; i < 600; i++) {
      const sub = i % 5 === 0 ? 'admin' : `group-${i % 13}`;
      const res = i % 7 === 0 ? 'clusters' : 'applications';
      const obj =
        res === 'clusters'
          ? `https://c${i % 14}.example.com`
          : `t${i % 14}/${i % 3 === 0 ? 'prod' : 'web'}-${i}`;
      const act = actions[i % 4]!;
      const a = ours.enforce({ name: sub }, res, act, obj).allowed;
      if (a) allowed++;
      if (a !== whole.enforceSync(sub, res, act, obj)) disagreements++;
    }
    expect(disagreements).toBe(0);
    expect(allowed).toBeGreaterThan(50);
  });
});
