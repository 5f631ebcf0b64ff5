// One Lua VM (wasmoon: Lua 5.4 compiled to WebAssembly) holding compiled health scripts. Memory is
// bounded by the VM's allocator (an allocation past the bound fails as Lua's "not enough memory"),
// time by an instruction budget (sandbox-lua.ts). Calls are synchronous: assess() stays synchronous.
import { LuaFactory, LUA_REGISTRYINDEX, type LuaEngine } from 'wasmoon';
import { SANDBOX_LUA } from './sandbox-lua.js';

export interface LuaLimits {
  /** Lua VM instructions one run may execute (Argo CD bounds a run to 1 s of gopher-lua). */
  instructions: number;
  /** Bytes one run may allocate on top of what the VM holds before it. */
  memoryBytes: number;
}

export const DEFAULT_LUA_LIMITS: LuaLimits = { instructions: 2_000_000, memoryBytes: 16 * 1024 * 1024 };

export type LuaOutcome =
  | { kind: 'table'; status: unknown; message: unknown }
  | { kind: 'nil' }
  | { kind: 'type'; type: string }
  | { kind: 'error'; message: string };

// The WebAssembly module is compiled once per process; each VM is a Lua state inside it.
let factory: LuaFactory | undefined;

// Room for the object itself: pushing it happens outside a protected call, where running out of
// memory would abort the VM. Objects come from the API server (etcd caps them at ~1.5 MB of JSON).
const PUSH_HEADROOM = 64 * 1024 * 1024;

type LuaModule = LuaEngine['global']['lua'];

export class LuaVm {
  private readonly lua: LuaModule;
  private readonly L: number;

  private constructor(
    private readonly engine: LuaEngine,
    private readonly limits: LuaLimits,
  ) {
    this.lua = engine.global.lua;
    this.L = engine.global.address;
  }

  static async create(open: boolean, limits: LuaLimits): Promise<LuaVm> {
    factory ??= new LuaFactory();
    const engine = await factory.createEngine({
      openStandardLibs: true,
      injectObjects: false,
      enableProxy: false,
      traceAllocations: true,
    });
    const vm = new LuaVm(engine, limits);
    engine.doStringSync(SANDBOX_LUA);
    if (!open) {
      // Argo CD's default VM has no string library: without it, strings get no methods either.
      engine.doStringSync('debug.setmetatable("", nil)');
    }
    return vm;
  }

  /** Compiles a script; returns its handle, or throws with Lua's syntax error. */
  compile(source: string, name: string): number {
    const { lua, L } = this;
    const top = lua.lua_gettop(L);
    try {
      lua.lua_getglobal(L, '__capstan_compile');
      this.pushString(source);
      this.pushString(name);
      if (lua.lua_pcallk(L, 2, 2, 0, 0, null) !== 0) throw new Error(this.stringAt(-1));
      if (lua.lua_type(L, -2) !== 6 /* function */) throw new Error(this.stringAt(-1));
      lua.lua_settop(L, -2); // drop the error slot, keep the function
      return lua.luaL_ref(L, LUA_REGISTRYINDEX);
    } finally {
      lua.lua_settop(L, top);
    }
  }

  run(handle: number, obj: unknown, open: boolean): LuaOutcome {
    const { lua, L } = this;
    const global = this.engine.global;
    const top = lua.lua_gettop(L);
    try {
      global.setMemoryMax(global.getMemoryUsed() + PUSH_HEADROOM);
      lua.lua_getglobal(L, '__capstan_run');
      lua.lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(handle) as never);
      this.push(obj, 0);
      lua.lua_pushboolean(L, open ? 1 : 0);
      lua.lua_pushnumber(L, this.limits.instructions);
      global.setMemoryMax(global.getMemoryUsed() + this.limits.memoryBytes);
      if (lua.lua_pcallk(L, 4, 3, 0, 0, null) !== 0) return { kind: 'error', message: this.stringAt(-1) };
      const kind = this.stringAt(-3);
      if (kind === 'table') return { kind, status: this.valueAt(-2), message: this.valueAt(-1) };
      if (kind === 'nil') return { kind };
      if (kind === 'type') return { kind, type: this.stringAt(-2) };
      return { kind: 'error', message: this.stringAt(-2) };
    } finally {
      lua.lua_settop(L, top);
      global.setMemoryMax(undefined);
    }
  }

  close(): void {
    this.engine.global.close();
  }

  private stringAt(index: number): string {
    const s = this.lua.lua_tolstring(this.L, index, null as never);
    return typeof s === 'string' ? s : '';
  }

  private valueAt(index: number): unknown {
    switch (this.lua.lua_type(this.L, index)) {
      case 4: // string
        return this.stringAt(index);
      case 3: // number
        return Number(this.stringAt(index));
      case 1: // boolean
        return this.lua.lua_toboolean(this.L, index) !== 0;
      case 0: // nil
      case -1:
        return undefined;
      default:
        return { luaType: this.lua.lua_typename(this.L, this.lua.lua_type(this.L, index)) };
    }
  }

  /** Bytes go through the VM's heap, not its small C stack (wasmoon's string arguments do). */
  private pushString(s: string): void {
    const mod = this.lua.module;
    const bytes = Buffer.from(s, 'utf8');
    const p = mod._malloc(Math.max(1, bytes.length));
    try {
      mod.HEAPU8.set(bytes, p);
      this.lua.lua_pushlstring(this.L, p, bytes.length);
    } finally {
      mod._free(p);
    }
  }

  /** JSON → Lua as gopher-lua's decodeValue: null → nil, arrays → 1-based tables. */
  private push(v: unknown, depth: number): void {
    const { lua, L } = this;
    if (depth > 100) throw new Error('object nested too deeply for a health check');
    if (v === null || v === undefined) lua.lua_pushnil(L);
    else if (typeof v === 'boolean') lua.lua_pushboolean(L, v ? 1 : 0);
    else if (typeof v === 'number') lua.lua_pushnumber(L, v);
    else if (typeof v === 'string') this.pushString(v);
    else if (Array.isArray(v)) {
      lua.lua_createtable(L, v.length, 0);
      v.forEach((x, i) => {
        this.push(x, depth + 1);
        lua.lua_rawseti(L, -2, BigInt(i + 1) as never);
      });
    } else if (typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      lua.lua_createtable(L, 0, entries.length);
      for (const [k, x] of entries) {
        this.pushString(k);
        this.push(x, depth + 1);
        lua.lua_rawset(L, -3);
      }
    } else lua.lua_pushnil(L);
  }
}
