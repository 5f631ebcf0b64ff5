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

/** The C API as the WebAssembly module exports it: direct calls, no per-call argument marshalling. */
interface LuaC {
  _malloc(n: number): number;
  _free(p: number): void;
  HEAPU8: Uint8Array;
  _lua_gettop(L: number): number;
  _lua_settop(L: number, i: number): void;
  _lua_getglobal(L: number, name: number): number;
  _lua_rawgeti(L: number, i: number, n: bigint): number;
  _lua_pushnil(L: number): void;
  _lua_pushboolean(L: number, b: number): void;
  _lua_pushnumber(L: number, n: number): void;
  _lua_pushlstring(L: number, p: number, len: number): number;
  _lua_createtable(L: number, narr: number, nrec: number): void;
  _lua_rawset(L: number, i: number): void;
  _lua_rawseti(L: number, i: number, n: bigint): void;
  _lua_pcallk(L: number, nargs: number, nresults: number, errfunc: number, ctx: number, k: number): number;
  _lua_type(L: number, i: number): number;
  _lua_toboolean(L: number, i: number): number;
  _lua_tolstring(L: number, i: number, len: number): number;
  _luaL_ref(L: number, t: number): number;
}

const LUA_TNIL = 0;
const LUA_TBOOLEAN = 1;
const LUA_TNUMBER = 3;
const LUA_TSTRING = 4;
const LUA_TFUNCTION = 6;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class LuaVm {
  private readonly c: LuaC;
  private readonly L: number;
  /** A reusable buffer in the VM's heap for strings going in (grown on demand). */
  private buf = 0;
  private bufSize = 0;
  /** Scratch word for lua_tolstring's length. */
  private readonly lenPtr: number;
  private readonly names: { run: number; compile: number };

  private constructor(
    private readonly engine: LuaEngine,
    private readonly limits: LuaLimits,
  ) {
    this.c = engine.global.lua.module as unknown as LuaC;
    this.L = engine.global.address;
    this.lenPtr = this.c._malloc(8);
    this.names = { run: this.cString('__capstan_run'), compile: this.cString('__capstan_compile') };
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
    const { c, L } = this;
    const top = c._lua_gettop(L);
    try {
      c._lua_getglobal(L, this.names.compile);
      this.pushString(source);
      this.pushString(name);
      if (c._lua_pcallk(L, 2, 2, 0, 0, 0) !== 0) throw new Error(this.stringAt(-1));
      if (c._lua_type(L, -2) !== LUA_TFUNCTION) throw new Error(this.stringAt(-1));
      c._lua_settop(L, -2); // drop the error slot, keep the function
      return c._luaL_ref(L, LUA_REGISTRYINDEX);
    } finally {
      c._lua_settop(L, top);
    }
  }

  run(handle: number, obj: unknown, open: boolean): LuaOutcome {
    const { c, L } = this;
    const global = this.engine.global;
    const top = c._lua_gettop(L);
    try {
      global.setMemoryMax(global.getMemoryUsed() + PUSH_HEADROOM);
      c._lua_getglobal(L, this.names.run);
      c._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(handle));
      this.push(obj, 0);
      c._lua_pushboolean(L, open ? 1 : 0);
      c._lua_pushnumber(L, this.limits.instructions);
      global.setMemoryMax(global.getMemoryUsed() + this.limits.memoryBytes);
      if (c._lua_pcallk(L, 4, 3, 0, 0, 0) !== 0) return { kind: 'error', message: this.stringAt(-1) };
      const kind = this.stringAt(-3);
      if (kind === 'table') return { kind, status: this.valueAt(-2), message: this.valueAt(-1) };
      if (kind === 'nil') return { kind };
      if (kind === 'type') return { kind, type: this.stringAt(-2) };
      return { kind: 'error', message: this.stringAt(-2) };
    } finally {
      c._lua_settop(L, top);
      global.setMemoryMax(undefined);
    }
  }

  private cString(s: string): number {
    const bytes = encoder.encode(`${s}\0`);
    const p = this.c._malloc(bytes.length);
    this.c.HEAPU8.set(bytes, p);
    return p;
  }

  private stringAt(index: number): string {
    const p = this.c._lua_tolstring(this.L, index, this.lenPtr);
    if (!p) return '';
    const heap = this.c.HEAPU8;
    const len = new DataView(heap.buffer).getUint32(this.lenPtr, true);
    return decoder.decode(heap.subarray(p, p + len));
  }

  private valueAt(index: number): unknown {
    switch (this.c._lua_type(this.L, index)) {
      case LUA_TSTRING:
        return this.stringAt(index);
      case LUA_TNUMBER:
        return Number(this.stringAt(index));
      case LUA_TBOOLEAN:
        return this.c._lua_toboolean(this.L, index) !== 0;
      case LUA_TNIL:
      case -1:
        return undefined;
      default:
        return { luaType: this.c._lua_type(this.L, index) };
    }
  }

  /** UTF-8 straight into a buffer of the VM's heap, then copied by Lua. */
  private pushString(s: string): void {
    const c = this.c;
    const need = s.length * 3;
    if (need > this.bufSize) {
      if (this.buf) c._free(this.buf);
      this.bufSize = Math.max(need, 4096);
      this.buf = c._malloc(this.bufSize);
      if (!this.buf) throw new Error('out of memory for a health check argument');
    }
    const { written } = encoder.encodeInto(s, c.HEAPU8.subarray(this.buf, this.buf + this.bufSize));
    c._lua_pushlstring(this.L, this.buf, written);
  }

  /** JSON → Lua as gopher-lua's decodeValue: null → nil, arrays → 1-based tables. */
  private push(v: unknown, depth: number): void {
    const { c, L } = this;
    if (depth > 100) throw new Error('object nested too deeply for a health check');
    if (v === null || v === undefined) c._lua_pushnil(L);
    else if (typeof v === 'boolean') c._lua_pushboolean(L, v ? 1 : 0);
    else if (typeof v === 'number') c._lua_pushnumber(L, v);
    else if (typeof v === 'string') this.pushString(v);
    else if (Array.isArray(v)) {
      c._lua_createtable(L, v.length, 0);
      for (let i = 0; i < v.length; i++) {
        this.push(v[i], depth + 1);
        c._lua_rawseti(L, -2, BigInt(i + 1));
      }
    } else if (typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      c._lua_createtable(L, 0, entries.length);
      for (const [k, x] of entries) {
        this.pushString(k);
        this.push(x, depth + 1);
        c._lua_rawset(L, -3);
      }
    } else c._lua_pushnil(L);
  }
}
