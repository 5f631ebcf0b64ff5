// The glob engine's worst cases (issue 10, part 1): pathological patterns at the limits of
// @capstan/glob (64 stars, 64 alternatives, 1024 characters) against 4 KiB inputs that keep every
// state of the matcher alive; then the worst RBAC decision a tenant can cause: a project whose roles
// are at RBAC_LIMITS (16 KiB of policy), every line pathological, asked about the longest object the
// enforcer accepts, with the decision cache defeated; and the policy rebuild at many projects.
import { performance } from 'node:perf_hooks';
import { compileGlob, GLOB_LIMITS } from '@capstan/glob';
import { projectRoleLines, RBAC_LIMITS, RbacEnforcer, type PolicyLine } from '@capstan/rbac';
import { report, summarize, type Figure } from './harness.js';

const TEXT = 'a'.repeat(4096);

const PATTERNS: Array<[name: string, pattern: string]> = [
  ['issue 10: *a×11 *b', '*a'.repeat(11) + '*b'],
  ['64 stars: *a×63 *b', '*a'.repeat(63) + '*b'],
  ['64 stars: *?×63 *b', '*?'.repeat(63) + '*b'],
  ['64 stars: *[!b]×63 *b', '*[!b]'.repeat(63) + '*b'],
  ['64 alternatives: *{a,aa}×6 *b', '*{a,aa}'.repeat(6) + '*b'],
  // 64 alternatives of 64 units: GLOB_LIMITS.maxExpandedUnits, all alive on "aaa…"
  ['4096 expanded units: {a,?}×6 *a×28 *b', '{a,?}'.repeat(6) + '*a'.repeat(28) + '*b'],
  // every instruction alive at once: stars then a long literal run that slides along the text
  ['1024 chars: *a×63 * a×894 b', '*a'.repeat(63) + '*' + 'a'.repeat(GLOB_LIMITS.maxLength - 127 - 2) + 'b'],
];

function opsPerSecond(fn: () => void, minMs = 300): { opsPerSec: number; usPerOp: number } {
  let n = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    fn();
    n++;
    elapsed = performance.now() - start;
  }
  return { opsPerSec: (n * 1000) / elapsed, usPerOp: (elapsed * 1000) / n };
}

function globFigures(): Figure[] {
  const figures: Figure[] = [];
  for (const [name, pattern] of PATTERNS) {
    const glob = compileGlob(pattern);
    if (glob.match(TEXT)) throw new Error(`${name} should not match`);
    const { opsPerSec, usPerOp } = opsPerSecond(() => glob.match(TEXT));
    figures.push({ name: `${name} vs 4 KiB: matches/s`, value: Math.round(opsPerSec), unit: 'ops/s' });
    figures.push({ name: `${name} vs 4 KiB: time per match`, value: usPerOp, unit: 'µs' });
  }
  return figures;
}

/**
 * A project's roles at the limits, every line as costly as a line may be: long star patterns whose
 * states all stay alive on "aaa…" (bounded by the line length and the project's characters), or
 * short lines whose {a,?} groups expand to 64 alternatives (bounded by the pattern budget).
 */
function worstProject(kind: 'stars' | 'alternatives'): string[] {
  const head = 'p, proj:team-a:r, applications, get, ';
  const tail = ', allow';
  // the index makes each line distinct (identical lines are loaded once)
  let line: (i: number) => string;
  if (kind === 'stars') {
    const stars = '*a'.repeat(GLOB_LIMITS.maxStars - 1) + '*';
    const fill = RBAC_LIMITS.maxLineLength - head.length - tail.length - 'team-a/'.length - stars.length - 3;
    line = (i) => `${head}team-a/${stars}${'a'.repeat(fill)}${String(i).padStart(2, '0')}b${tail}`;
  } else {
    line = (i) =>
      `${head}"team-a/${'{a,?}'.repeat(6)}${'*a'.repeat(20)}*${String(i).padStart(2, '0')}b"${tail}`;
  }
  const policies: string[] = [];
  for (let i = 0; policies.length < RBAC_LIMITS.maxProjectRoleLines - 1; i++) {
    const next = [...policies, line(i)];
    if (projectRoleLines('team-a', [{ name: 'r', policies: next, groups: ['tenant'] }]).problems.length > 0)
      break;
    policies.push(line(i));
  }
  return policies;
}

async function worstEnforce(kind: 'stars' | 'alternatives'): Promise<Figure[]> {
  const policies = worstProject(kind);
  const { lines } = projectRoleLines('team-a', [{ name: 'r', policies, groups: ['tenant'] }]);
  const enforcer = await RbacEnforcer.create(lines, { cacheSize: 1 });
  const chars = policies.reduce((n, l) => n + l.length, 0);
  const samples: number[] = [];
  for (let i = 0; i < 40; i++) {
    // a different object each time: the decision cache never answers
    const object = `team-a/${'a'.repeat(RBAC_LIMITS.maxObjectLength - 7 - 4)}${String(i).padStart(4, '0')}`;
    const start = performance.now();
    const d = enforcer.enforce({ name: 'mallory', groups: ['tenant'] }, 'applications', 'get', object);
    samples.push(performance.now() - start);
    if (d.allowed) throw new Error('the worst case must not be allowed');
  }
  const s = summarize(samples);
  const what = `worst enforce (${kind}: ${policies.length} lines, ${chars} chars) × ${RBAC_LIMITS.maxObjectLength}-char object`;
  return [
    { name: `${what}: p50`, value: s.p50, unit: 'ms' },
    { name: `${what}: p99`, value: s.p99, unit: 'ms' },
  ];
}

async function rebuildFigures(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const projects of [100, 1000]) {
    const lines: PolicyLine[] = [];
    for (let p = 0; p < projects; p++) {
      const name = `team-${p}`;
      lines.push(
        ...projectRoleLines(name, [
          {
            name: 'dev',
            policies: [
              `p, proj:${name}:dev, applications, *, ${name}/*, allow`,
              `p, proj:${name}:dev, applications, delete, ${name}/prod-*, deny`,
            ],
            groups: [`${name}-devs`],
          },
        ]).lines,
      );
    }
    const start = performance.now();
    await RbacEnforcer.create(lines);
    figures.push({
      name: `policy rebuild, ${projects} projects × 3 lines`,
      value: performance.now() - start,
      unit: 'ms',
    });
  }
  return figures;
}

export async function main(): Promise<void> {
  const globs = globFigures();
  const enforce = [...(await worstEnforce('stars')), ...(await worstEnforce('alternatives'))];
  const rebuild = await rebuildFigures();
  report('glob', [...globs, ...enforce, ...rebuild], {
    limits: { glob: GLOB_LIMITS, rbac: RBAC_LIMITS },
    input: '4096 × "a": every pattern keeps its states alive to the end and then fails',
  });
}
