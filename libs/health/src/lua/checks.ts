// Custom health checks: compiled once into one of two VMs (default libraries or Argo CD's
// useOpenLibs), run per object. Argo CD's contract (operator-manual/health.md, util/lua/lua.go):
// the global `obj` is the resource, the script returns a table with `status` and an optional
// `message`; an invalid status is Unknown "Lua returned an invalid health status"; a non-table
// result is an error; an error (or a bound reached) is Unknown with the error's message.
import type { HealthCustomization, HealthStatus, HealthStatusCode, LiveObject } from '../types.js';
import { HEALTH_CODES } from '../types.js';
import { DEFAULT_LUA_LIMITS, LuaVm, type LuaLimits } from './vm.js';

export class HealthCheckCompileError extends Error {
  constructor(
    readonly source: string,
    message: string,
  ) {
    super(`health check ${source}: ${message}`);
    this.name = 'HealthCheckCompileError';
  }
}

export interface CompiledCheck {
  /** undefined: the script returned nil (Argo CD then shows no status; Capstan: no health). */
  run(obj: LiveObject): HealthStatus | undefined;
}

export interface LuaChecks {
  compile(c: HealthCustomization): CompiledCheck;
}

export async function createLuaChecks(
  customizations: readonly HealthCustomization[],
  limits: LuaLimits = DEFAULT_LUA_LIMITS,
): Promise<LuaChecks> {
  const vms = new Map<boolean, LuaVm>();
  for (const open of new Set(customizations.map((c) => c.useOpenLibs === true)))
    vms.set(open, await LuaVm.create(open, limits));
  return {
    compile(c) {
      const open = c.useOpenLibs === true;
      const vm = vms.get(open)!;
      const source = c.source ?? (c.group ? `${c.group}/${c.kind}` : c.kind);
      let handle: number;
      try {
        handle = vm.compile(c.lua, source);
      } catch (err) {
        throw new HealthCheckCompileError(source, (err as Error).message);
      }
      return { run: (obj) => toHealth(vm, handle, obj, open, limits) };
    },
  };
}

/** The bounds' own errors, said plainly. */
function stopped(message: string, limits: LuaLimits): string {
  if (message === 'instruction limit exceeded')
    return `Lua health check stopped: it ran more than ${limits.instructions} instructions`;
  if (message === 'not enough memory')
    return `Lua health check stopped: it allocated more than ${limits.memoryBytes} bytes`;
  return message;
}

function toHealth(
  vm: LuaVm,
  handle: number,
  obj: LiveObject,
  open: boolean,
  limits: LuaLimits,
): HealthStatus | undefined {
  let outcome;
  try {
    outcome = vm.run(handle, obj, open);
  } catch (err) {
    // The VM itself failed (never the script's doing): report, do not crash the caller.
    return { status: 'Unknown', message: `health check failed: ${(err as Error).message}` };
  }
  switch (outcome.kind) {
    case 'nil':
      return undefined;
    case 'type':
      return { status: 'Unknown', message: `expect table output from Lua script, not ${outcome.type}` };
    case 'error':
      return { status: 'Unknown', message: stopped(outcome.message, limits) };
    case 'table': {
      const { status, message } = outcome;
      if (message !== undefined && typeof message !== 'string')
        return { status: 'Unknown', message: 'Lua returned a health message that is not a string' };
      if (typeof status !== 'string' || !HEALTH_CODES.includes(status as HealthStatusCode))
        return { status: 'Unknown', message: 'Lua returned an invalid health status' };
      return message
        ? { status: status as HealthStatusCode, message }
        : { status: status as HealthStatusCode };
    }
  }
}
