// Deciding once per project must give exactly the per-application decisions: checked against the
// real enforcer (casbin through @capstan/rbac) and against glob matching name by name.
import { describe, expect, it } from 'vitest';
import { BUILTIN_POLICY_CSV, rbacMatch, parsePolicyCsv, RbacEnforcer } from '@capstan/rbac';
import { ApplicationVisibility, patternReach, uniformProject } from './application-visibility.js';

const PROJECTS = ['team-0', 'team-1', 'team-10', 'team', 'default'];
const NAMES = ['a', 'app-1', 'app-10', 'guestbook', 'team-1', 'x.y', 'web-1', '1'];
const PATTERNS = [
  '*',
  '*/*',
  'team-0/*',
  'team-1/*',
  'team-1*',
  'team*',
  'team-*/*',
  '*/app-1',
  'team-1/app-1*',
  'team-1/app-1',
  '*-1',
  '*/*-1',
  '*1/*',
  '*0*',
  'team-?/*',
  'team-{0,1}/*',
  'team-[01]/*',
  'default/*',
  'default',
  'team-1/',
  '',
];

describe('patternReach', () => {
  it.each(PATTERNS)('is certain of "every" and "none" only when name by name agrees (%s)', (pattern) => {
    for (const project of PROJECTS) {
      const matches = NAMES.map((n) => rbacMatch(`${project}/${n}`, pattern));
      const reach = patternReach(pattern, project);
      if (reach === 'every') expect(matches.every(Boolean), `${pattern} on ${project}`).toBe(true);
      if (reach === 'none') expect(matches.some(Boolean), `${pattern} on ${project}`).toBe(false);
    }
  });

  it('recognises the usual project-wide patterns', () => {
    expect(patternReach('*', 'team-1')).toBe('every');
    expect(patternReach('*/*', 'team-1')).toBe('every');
    expect(patternReach('team-1/*', 'team-1')).toBe('every');
    expect(patternReach('team-1/*', 'team-10')).toBe('none');
    expect(patternReach('team-0/*', 'team-1')).toBe('none');
    expect(patternReach('team-1/app-1', 'team-1')).toBe('some');
    expect(patternReach('team-{0,1}/*', 'team-1')).toBe('some');
  });
});

async function enforcer(csv: string, defaultRole = ''): Promise<RbacEnforcer> {
  return RbacEnforcer.create(
    [...parsePolicyCsv(BUILTIN_POLICY_CSV, 'builtin'), ...parsePolicyCsv(csv, 'policy.csv')],
    { defaultRole },
  );
}

const POLICIES: [string, string, string][] = [
  ['a project-wide grant', 'p, role:r, applications, get, team-1/*, allow\ng, readers, role:r', ''],
  ['a grant on everything', 'p, role:r, applications, get, */*, allow\ng, readers, role:r', ''],
  [
    'a grant with a deny naming one application',
    'p, role:r, applications, get, */*, allow\np, role:r, applications, get, team-1/app-1, deny\ng, readers, role:r',
    '',
  ],
  [
    'a grant naming one application in another project',
    'p, role:r, applications, get, team-0/*, allow\np, alice, applications, get, team-1/guestbook, allow\ng, readers, role:r',
    '',
  ],
  ['a bracket pattern', 'p, role:r, applications, *, team-[01]/*, allow\ng, readers, role:r', ''],
  ['the default role', 'p, role:r, applications, get, team-0/*, deny\ng, readers, role:r', 'role:readonly'],
  ['a suffix pattern', 'p, role:r, applications, get, */*-1, allow\ng, readers, role:r', ''],
];

describe('ApplicationVisibility', () => {
  it.each(POLICIES)('decides as the enforcer does per application (%s)', async (_, csv, defaultRole) => {
    const e = await enforcer(csv, defaultRole);
    for (const principal of [
      { name: 'alice', groups: ['readers'] },
      { name: 'bob', groups: [] },
      { name: 'admin', groups: [] },
    ]) {
      const visibility = new ApplicationVisibility(e, principal);
      for (const project of PROJECTS) {
        for (const name of NAMES) {
          expect(visibility.allows(project, name), `${principal.name} ${project}/${name}`).toBe(
            e.enforce(principal, 'applications', 'get', `${project}/${name}`).allowed,
          );
        }
      }
    }
  });

  it('decides per application in a project some line names', async () => {
    const e = await enforcer(
      'p, role:r, applications, get, */*, allow\np, role:r, applications, get, team-1/app-1, deny\ng, readers, role:r',
    );
    expect(uniformProject(e, 'team-0')).toBe(true);
    expect(uniformProject(e, 'team-1')).toBe(false);
    const alice = new ApplicationVisibility(e, { name: 'alice', groups: ['readers'] });
    expect(alice.allows('team-1', 'guestbook')).toBe(true);
    expect(alice.allows('team-1', 'app-1')).toBe(false);
    expect(alice.allows('team-1', 'web-1')).toBe(true);
  });
});
