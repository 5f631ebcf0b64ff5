// Custom health checks in Lua, with Argo CD's contract (docs/operator-manual/health.md "Custom Health
// Checks"; util/lua/lua.go ExecuteHealthLua) and Capstan's bounds on untrusted scripts.
import { describe, expect, it } from 'vitest';
import { createHealthAssessor, HealthCheckCompileError, type HealthCustomization } from '../index.js';

// The example of Argo CD's documentation, verbatim.
const CERTIFICATE = `hs = {}
if obj.status ~= nil then
  if obj.status.conditions ~= nil then
    for i, condition in ipairs(obj.status.conditions) do
      if condition.type == "Ready" and condition.status == "False" then
        hs.status = "Degraded"
        hs.message = condition.message
        return hs
      end
      if condition.type == "Ready" and condition.status == "True" then
        hs.status = "Healthy"
        hs.message = condition.message
        return hs
      end
    end
  end
end

hs.status = "Progressing"
hs.message = "Waiting for certificate"
return hs`;

const certificate = (ready?: 'True' | 'False') => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'web', namespace: 'team-a' },
  ...(ready ? { status: { conditions: [{ type: 'Ready', status: ready, message: `ready ${ready}` }] } } : {}),
});

const check = (kind: string, lua: string, extra: Partial<HealthCustomization> = {}): HealthCustomization => ({
  group: 'example.com',
  kind,
  lua,
  ...extra,
});
const obj = (kind: string) => ({ apiVersion: 'example.com/v1', kind, metadata: { name: 'x' } });

describe('custom health checks', () => {
  it("runs Argo's documented cert-manager check: obj in, hs.status/hs.message out", async () => {
    const a = await createHealthAssessor({
      customizations: [{ group: 'cert-manager.io', kind: 'Certificate', lua: CERTIFICATE }],
    });
    expect(a.assess(certificate())).toEqual({ status: 'Progressing', message: 'Waiting for certificate' });
    expect(a.assess(certificate('True'))).toEqual({ status: 'Healthy', message: 'ready True' });
    expect(a.assess(certificate('False'))).toEqual({ status: 'Degraded', message: 'ready False' });
  });

  it('overrides the built-in rule of its kind (DOC "Overriding Go-Based Health Checks")', async () => {
    const a = await createHealthAssessor({
      customizations: [
        {
          group: 'apps',
          kind: 'Deployment',
          lua: 'return { status = "Suspended", message = obj.metadata.name }',
        },
      ],
    });
    const d = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: {}, status: {} };
    expect(a.assess(d)).toEqual({ status: 'Suspended', message: 'web' });
    // Other kinds keep their built-in rule.
    expect(a.assess({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', status: { phase: 'Bound' } })).toEqual(
      {
        status: 'Healthy',
      },
    );
  });

  it('matches a core kind by its kind alone, and wildcards after exact keys (util/lua GetHealthScript)', async () => {
    const a = await createHealthAssessor({
      customizations: [
        { group: '*.crossplane.io', kind: '*', lua: 'return { status = "Degraded", message = "wildcard" }' },
        {
          group: 'ec2.aws.crossplane.io',
          kind: 'VPC',
          lua: 'return { status = "Healthy", message = "exact" }',
        },
        { group: '', kind: 'Service', lua: 'return { status = "Suspended" }' },
      ],
    });
    expect(a.assess({ apiVersion: 'ec2.aws.crossplane.io/v1', kind: 'VPC' })).toEqual({
      status: 'Healthy',
      message: 'exact',
    });
    expect(a.assess({ apiVersion: 'rds.aws.crossplane.io/v1', kind: 'DBInstance' })).toEqual({
      status: 'Degraded',
      message: 'wildcard',
    });
    expect(a.assess({ apiVersion: 'v1', kind: 'Service', spec: {} })).toEqual({ status: 'Suspended' });
    expect(a.assess({ apiVersion: 'example.io/v1', kind: 'Other' })).toBeUndefined();
  });

  it('sees arrays as 1-based tables and JSON null as nil (gopher-lua decodeValue)', async () => {
    const a = await createHealthAssessor({
      customizations: [
        check(
          'Shape',
          'return { status = "Healthy", message = tostring(#obj.spec.items) .. obj.spec.items[1] .. tostring(obj.spec.gone == nil) }',
        ),
      ],
    });
    expect(a.assess({ ...obj('Shape'), spec: { items: ['a', 'b'], gone: null } })).toEqual({
      status: 'Healthy',
      message: '2atrue',
    });
  });

  it('maps invalid results as Argo does', async () => {
    const a = await createHealthAssessor({
      customizations: [
        check('Invalid', 'return { status = "Great" }'),
        check('Number', 'return 42'),
        check('Nil', 'return nil'),
        check('Getn', 'return { status = "Healthy", message = tostring(table.getn({1, 2, 3})) }'),
      ],
    });
    expect(a.assess(obj('Invalid'))).toEqual({
      status: 'Unknown',
      message: 'Lua returned an invalid health status',
    });
    expect(a.assess(obj('Number'))).toEqual({
      status: 'Unknown',
      message: 'expect table output from Lua script, not number',
    });
    expect(a.assess(obj('Nil'))).toBeUndefined();
    // Lua 5.1's table.getn, which argo-cd's bundled scripts use, is there.
    expect(a.assess(obj('Getn'))).toEqual({ status: 'Healthy', message: '3' });
  });

  it('a script error is Unknown with the error, and the assessor keeps working', async () => {
    const a = await createHealthAssessor({
      customizations: [
        check('Broken', 'return obj.status.conditions[1].type'),
        check('Fine', 'return { status = "Healthy" }'),
      ],
    });
    expect(a.assess(obj('Broken'))).toEqual({
      status: 'Unknown',
      message: "example.com/Broken:1: attempt to index a nil value (field 'status')",
    });
    expect(a.assess(obj('Fine'))).toEqual({ status: 'Healthy' });
  });

  it('a group/kind that is not a valid glob fails createHealthAssessor, naming where it was configured', async () => {
    await expect(
      createHealthAssessor({
        customizations: [check('{Bad', 'return nil', { source: 'resource.customizations {Bad' })],
      }),
    ).rejects.toThrow(/^health check resource.customizations {Bad: /);
  });

  it('a syntax error fails createHealthAssessor, naming where the script was configured', async () => {
    const made = createHealthAssessor({
      customizations: [check('Bad', 'hs = {', { source: 'resource.customizations.health.example.com_Bad' })],
    });
    await expect(made).rejects.toBeInstanceOf(HealthCheckCompileError);
    await expect(made).rejects.toThrow(
      /^health check resource.customizations.health.example.com_Bad: .*unexpected symbol|expected/,
    );
  });
});

describe('bounds on untrusted scripts', () => {
  const limits = { instructions: 200_000, memoryBytes: 2 * 1024 * 1024 };

  it('a script that loops forever is stopped: Unknown, and the next run works', async () => {
    const a = await createHealthAssessor({
      luaLimits: limits,
      customizations: [check('Loop', 'while true do end'), check('Fine', 'return { status = "Healthy" }')],
    });
    expect(a.assess(obj('Loop'))).toEqual({
      status: 'Unknown',
      message: 'Lua health check stopped: it ran more than 200000 instructions',
    });
    expect(a.assess(obj('Fine'))).toEqual({ status: 'Healthy' });
  });

  it('cannot catch its way past the bound with pcall, xpcall or coroutines', async () => {
    const a = await createHealthAssessor({
      luaLimits: limits,
      customizations: [
        check('PLoop', 'while true do pcall(function() while true do end end) end'),
        check(
          'XLoop',
          'while true do xpcall(function() while true do end end, function(e) return e end) end',
        ),
        check(
          'CoLoop',
          'local c = coroutine.create(function() while true do end end) while true do coroutine.resume(c) end',
          { useOpenLibs: true },
        ),
        check('WrapLoop', 'while true do pcall(coroutine.wrap(function() while true do end end)) end', {
          useOpenLibs: true,
        }),
      ],
    });
    for (const k of ['PLoop', 'XLoop', 'CoLoop', 'WrapLoop'])
      expect(a.assess(obj(k))?.message, k).toBe(
        'Lua health check stopped: it ran more than 200000 instructions',
      );
  });

  it('is bounded in memory: Unknown, not a crash', async () => {
    const a = await createHealthAssessor({
      luaLimits: limits,
      customizations: [
        check('Grow', 'local s = "x" for i = 1, 40 do s = s .. s end return { status = "Healthy" }'),
        check('Tables', 'local t = {} for i = 1, 1e7 do t[i] = {} end return { status = "Healthy" }'),
      ],
    });
    expect(a.assess(obj('Grow'))).toEqual({
      status: 'Unknown',
      message: `Lua health check stopped: it allocated more than ${limits.memoryBytes} bytes`,
    });
    expect(a.assess(obj('Tables'))?.status).toBe('Unknown');
  });

  it('has no os.execute, io or string library without useOpenLibs (util/lua/lua.go: base, table, safe os)', async () => {
    const a = await createHealthAssessor({
      customizations: [
        check('Exec', 'os.execute("touch /tmp/capstan-pwned") return { status = "Healthy" }'),
        check('Io', 'return { status = "Healthy", message = io.open("/etc/passwd"):read("a") }'),
        check('Str', 'return { status = "Healthy", message = ("x"):rep(3) }'),
        check('Time', 'return { status = "Healthy", message = type(os.time()) }'),
        check(
          'Escape',
          'return { status = "Healthy", message = tostring(load) .. tostring(require) .. tostring(debug) }',
        ),
      ],
    });
    expect(a.assess(obj('Exec'))).toEqual({
      status: 'Unknown',
      message: "example.com/Exec:1: attempt to call a nil value (field 'execute')",
    });
    expect(a.assess(obj('Io'))?.message).toMatch(/attempt to index a nil value \(global 'io'\)/);
    expect(a.assess(obj('Str'))?.message).toMatch(/attempt to index a string value/);
    expect(a.assess(obj('Time'))).toEqual({ status: 'Healthy', message: 'number' });
    expect(a.assess(obj('Escape'))).toEqual({ status: 'Healthy', message: 'nilnilnil' });
  });

  it('with useOpenLibs gets string and math, still no os.execute and no files', async () => {
    const open = { useOpenLibs: true };
    const a = await createHealthAssessor({
      customizations: [
        check(
          'Str',
          'return { status = "Healthy", message = string.format("%s-%d", ("ab"):upper(), math.floor(2.5)) }',
          open,
        ),
        check('Exec', 'os.execute("touch /tmp/capstan-pwned") return { status = "Healthy" }', open),
        check('File', 'return { status = "Healthy", message = tostring(io) .. tostring(os.remove) }', open),
        check(
          'Meta',
          'local ok = pcall(function() getmetatable("").__index.upper = nil end) return { status = "Healthy", message = tostring(getmetatable("")) .. ("a"):upper() }',
          open,
        ),
      ],
    });
    expect(a.assess(obj('Str'))).toEqual({ status: 'Healthy', message: 'AB-2' });
    expect(a.assess(obj('Exec'))).toEqual({
      status: 'Unknown',
      message: 'example.com/Exec:1: os.execute is not available to health checks',
    });
    expect(a.assess(obj('File'))).toEqual({ status: 'Healthy', message: 'nilnil' });
    // The strings' shared metatable is not reachable: the next run still has string methods.
    expect(a.assess(obj('Meta'))).toEqual({ status: 'Healthy', message: 'falseA' });
    expect(a.assess(obj('Str'))).toEqual({ status: 'Healthy', message: 'AB-2' });
  });

  it('each run starts from fresh globals: a script cannot leave state for the next', async () => {
    const a = await createHealthAssessor({
      customizations: [
        check(
          'Poison',
          'count = (count or 0) + 1 table.insert = nil return { status = "Healthy", message = tostring(count) }',
        ),
        check(
          'Victim',
          'local t = {} table.insert(t, 1) return { status = "Healthy", message = tostring(#t) }',
        ),
      ],
    });
    expect(a.assess(obj('Poison'))?.message).toBe('1');
    expect(a.assess(obj('Poison'))?.message).toBe('1');
    expect(a.assess(obj('Victim'))).toEqual({ status: 'Healthy', message: '1' });
  });

  it('refuses finalizers, which would run outside the budget', async () => {
    const a = await createHealthAssessor({
      customizations: [
        check(
          'Gc',
          'setmetatable({}, { __gc = function() while true do end end }) return {status="Healthy"}',
        ),
      ],
    });
    expect(a.assess(obj('Gc'))?.message).toMatch(/__gc metamethods are not allowed in health checks/);
  });
});
