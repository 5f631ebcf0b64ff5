// The trusted Lua of each VM, run once with the host's libraries before any script is compiled.
// Scripts never see the host's globals: each run gets a fresh environment (Argo CD builds a new
// LState per run) holding copies of the libraries Argo CD grants:
// - default: base functions, `table` and a safe `os` (time, date), as util/lua/lua.go opens them;
// - useOpenLibs: also `string`, `math`, `utf8`, `coroutine` and the clock functions of `os`, without
//   what would escape the sandbox or its bounds: no debug, load*, require, io (files of the VM's
//   in-memory file system would outlive a run and grow outside the memory bound), os.execute/exit,
//   os.remove/rename/tmpname, os.getenv.
// Time is bounded by an instruction budget counted by a hook every STEP instructions: once spent,
// every further hook raises the same error object, and the pcall/xpcall/coroutine the script sees
// re-raise it, so a script cannot catch its way past the bound.
export const STEP = 1000;

export const SANDBOX_LUA = `
local STEP = ${STEP}
local host_pcall, host_xpcall, host_error, host_type = pcall, xpcall, error, type
local host_select, host_rawget, host_setmetatable, host_tostring = select, rawget, setmetatable, tostring
local host_pairs, host_load = pairs, load
local sethook, setupvalue = debug.sethook, debug.setupvalue
local pack, unpack = table.pack, table.unpack

local budget = host_setmetatable({}, { __tostring = function() return "instruction limit exceeded" end })
local used, limit = 0, 0
local function hook()
  used = used + STEP
  if used > limit then host_error(budget, 0) end
end

local function rethrow(...)
  if (...) == false and host_select(2, ...) == budget then host_error(budget, 0) end
  return ...
end
local function pcall_(f, ...) return rethrow(host_pcall(f, ...)) end
local function xpcall_(f, handler, ...)
  return rethrow(host_xpcall(f, function(e) if e == budget then return e end return handler(e) end, ...))
end
local function setmetatable_(t, mt)
  -- Finalizers would run outside the budget (after the script, during collection).
  if host_type(mt) == "table" and host_rawget(mt, "__gc") ~= nil then
    host_error("__gc metamethods are not allowed in health checks", 2)
  end
  return host_setmetatable(t, mt)
end
local function copy(lib, names)
  local t = {}
  if names then for _, n in host_pairs(names) do t[n] = lib[n] end
  else for k, v in host_pairs(lib) do t[k] = v end end
  return t
end
local function refuse(name)
  return function() host_error(name .. " is not available to health checks", 2) end
end

local BASE_NAMES = { "assert", "error", "ipairs", "next", "pairs", "rawequal", "rawget", "rawlen",
  "rawset", "select", "tonumber", "tostring", "type", "getmetatable", "_VERSION" }

-- Built once per VM; a run's environment reads through to them and writes into its own tables, so
-- nothing a script assigns outlives the run (copying the libraries per run would cost more than
-- most scripts). Their metatables are hidden (__metatable) so a script cannot reach the shared tables.
local function base(open)
  local b = copy(_G, BASE_NAMES)
  b.pcall, b.xpcall, b.setmetatable = pcall_, xpcall_, setmetatable_
  b.print = function() end
  b.unpack = unpack -- Lua 5.1's global, which gopher-lua scripts use
  return b
end
local function lib(t) return { __index = t, __metatable = false } end
local TABLE = copy(table)
TABLE.getn = function(t) return #t end -- Lua 5.1's table.getn (argo-cd's bundled scripts use it)
local SAFE_OS = { time = os.time, date = os.date }
local LIBS_CLOSED = { table = lib(TABLE), os = lib(SAFE_OS) }
local LIBS_OPEN = { table = lib(TABLE), string = lib(copy(string)), math = lib(copy(math)), utf8 = lib(copy(utf8)) }
do
  local co = copy(coroutine)
  -- A hook set from Lua belongs to one thread: every coroutine gets the budget's hook too.
  co.create = function(f)
    local c = coroutine.create(f)
    sethook(c, hook, "", STEP)
    return c
  end
  co.resume = function(c, ...) return rethrow(coroutine.resume(c, ...)) end
  co.wrap = function(f)
    local c = co.create(f)
    return function(...)
      local r = pack(rethrow(coroutine.resume(c, ...)))
      if not r[1] then host_error(r[2], 0) end
      return unpack(r, 2, r.n)
    end
  end
  LIBS_OPEN.coroutine = lib(co)
  local o = copy(os, { "time", "date", "clock", "difftime" })
  o.execute, o.exit = refuse("os.execute"), refuse("os.exit")
  o.getenv = function() return nil end
  LIBS_OPEN.os = lib(o)
end
local ENV_CLOSED = { __index = base(false), __metatable = false }
local ENV_OPEN = { __index = base(true), __metatable = false }

local function make_env(open)
  local env = host_setmetatable({}, open and ENV_OPEN or ENV_CLOSED)
  for name, mt in host_pairs(open and LIBS_OPEN or LIBS_CLOSED) do env[name] = host_setmetatable({}, mt) end
  env._G = env
  return env
end

-- Shared metatables (strings') must not be reachable for writing: a script could change what the
-- next run sees.
do
  local smt = getmetatable("")
  if smt then smt.__metatable = false end
end

function __capstan_compile(source, name)
  return host_load(source, "=" .. name, "t", {})
end

-- Returns (outcome, status, message): "table" with the fields, "nil", "type" with the type name,
-- or "error" with the message.
function __capstan_run(fn, obj, open, instructions)
  local env = make_env(open)
  env.obj = obj
  setupvalue(fn, 1, env) -- the main chunk's only upvalue is _ENV
  used, limit = 0, instructions
  sethook(hook, "", STEP)
  local ok, result = host_pcall(fn)
  sethook()
  setupvalue(fn, 1, nil)
  env = nil
  -- No full collection per run: Lua collects incrementally, and an allocation that would pass the
  -- bound first runs an emergency full collection, so garbage of earlier runs never counts against one.
  if not ok then
    if result == budget then return "error", "instruction limit exceeded" end
    local t = host_type(result)
    -- Never a script's __tostring: it would run after the budget's hook is gone.
    if t == "string" or t == "number" then return "error", host_tostring(result) end
    return "error", "(error object is a " .. t .. " value)"
  end
  if result == nil then return "nil" end
  if host_type(result) ~= "table" then return "type", host_type(result) end
  return "table", host_rawget(result, "status"), host_rawget(result, "message")
end
`;
