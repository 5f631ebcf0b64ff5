// RBAC decisions per second with a 1,000-line Argo CD policy (issue 6): 120 tenant roles with
// seven policy lines each (allows, a deny, globbed objects), 150 group bindings, plus the built-in
// roles. "cold" decisions are all distinct (every one evaluated by casbin); "warm" repeat a working
// set, as an api answering the same users does (decisions are cached per policy version).
import { performance } from 'node:perf_hooks';
import { BUILTIN_POLICY_CSV, parsePolicyCsv, RbacEnforcer } from '@capstan/rbac';
import { report, type Figure } from './harness.js';

function policy(): string {
  const lines: string[] = [];
  for (let r = 0; r < 120; r++) {
    const role = `role:team-${r}`;
    lines.push(`p, ${role}, applications, get, team-${r}/*, allow`);
    lines.push(`p, ${role}, applications, sync, team-${r}/*, allow`);
    lines.push(`p, ${role}, applications, create, team-${r}/web-*, allow`);
    lines.push(`p, ${role}, applications, delete, team-${r}/prod-*, deny`);
    lines.push(`p, ${role}, applicationsets, *, team-${r}/*, allow`);
    lines.push(`p, ${role}, repositories, get, team-${r}/*, allow`);
    lines.push(`p, ${role}, projects, get, team-${r}, allow`);
  }
  for (let g = 0; g < 150; g++) lines.push(`g, group-${g}, role:team-${g % 120}`);
  return lines.join('\n');
}

export async function main(): Promise<void> {
  const lines = [...parsePolicyCsv(BUILTIN_POLICY_CSV, 'builtin'), ...parsePolicyCsv(policy(), 'policy.csv')];
  const enforcer = await RbacEnforcer.create(lines, { defaultRole: 'role:readonly', cacheSize: 10_000_000 });
  const actions = ['get', 'sync', 'create', 'delete'];
  const request = (i: number) => ({
    principal: { name: `user-${i % 5000}`, groups: [`group-${i % 150}`] },
    action: actions[i % 4]!,
    object: `team-${(i * 7) % 120}/${i % 3 === 0 ? 'prod' : 'web'}-${i}`,
  });

  // Cold: N distinct requests, none seen before.
  const cold = 20_000;
  let allowed = 0;
  let t0 = performance.now();
  for (let i = 0; i < cold; i++) {
    const r = request(i);
    if (enforcer.enforce(r.principal, 'applications', r.action, r.object).allowed) allowed++;
  }
  const coldSeconds = (performance.now() - t0) / 1000;

  // Warm: a working set of 2,000 requests, repeated.
  const warm = 2_000_000;
  t0 = performance.now();
  for (let i = 0; i < warm; i++) {
    const r = request(i % 2000);
    enforcer.enforce(r.principal, 'applications', r.action, r.object);
  }
  const warmSeconds = (performance.now() - t0) / 1000;

  const figures: Figure[] = [
    { name: 'policy lines', value: lines.length, unit: 'lines' },
    {
      name: 'cold decisions (casbin evaluates each)',
      value: Math.round(cold / coldSeconds),
      unit: 'decisions/s',
    },
    { name: 'cold decision mean latency', value: (coldSeconds * 1e6) / cold, unit: 'µs' },
    {
      name: 'warm decisions (cached per policy version)',
      value: Math.round(warm / warmSeconds),
      unit: 'decisions/s',
    },
    { name: 'share of cold requests allowed', value: Math.round((allowed / cold) * 100), unit: '%' },
  ];
  report('api-rbac', figures, { workingSet: 2000, coldRequests: cold, warmRequests: warm });
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
