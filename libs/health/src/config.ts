// argocd-cm's health customizations → HealthCustomization[] (util/settings GetResourceOverrides):
// the `resource.customizations` YAML block (`<group>/<kind>: { health.lua, health.lua.useOpenLibs }`)
// first, then the split keys `resource.customizations.health.<group>_<kind>` and
// `resource.customizations.useOpenLibs.<group>_<kind>`, which override the block's entry of the
// same group/kind. `<kind>` alone is the core group; `all` is every kind (`*/*`). Keys of other
// customization types (actions, ignoreDifferences, …) and other settings are not health's: ignored.
import { parse } from 'yaml';
import type { HealthCustomization } from './types.js';

export const CUSTOMIZATIONS_KEY = 'resource.customizations';

export class HealthConfigError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`${key}: ${message}`);
    this.name = 'HealthConfigError';
  }
}

interface Override {
  lua?: string;
  useOpenLibs?: boolean;
  source: string;
}

/** Go strconv.ParseBool, as Argo CD reads useOpenLibs. */
function parseBool(key: string, v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  const s = String(v);
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  throw new HealthConfigError(key, `strconv.ParseBool: parsing ${JSON.stringify(s)}: invalid syntax`);
}

/** util/settings convertToOverrideKey: "cert-manager.io_Certificate" → "cert-manager.io/Certificate". */
function overrideKeyOf(key: string, groupKind: string): string {
  const parts = groupKind.split('_');
  if (parts.length === 2) return `${parts[0]}/${parts[1]}`;
  if (parts.length === 1 && groupKind !== '') return groupKind === 'all' ? '*/*' : groupKind;
  throw new HealthConfigError(
    key,
    `group kind should be in format \`resource.customizations.<type>.<group_kind>\` or resource.customizations.<type>.<kind>\`, got group kind: '${groupKind}'`,
  );
}

function fromBlock(value: unknown, overrides: Map<string, Override>): void {
  let block: unknown;
  try {
    block = typeof value === 'string' ? parse(value) : value;
  } catch (err) {
    throw new HealthConfigError(CUSTOMIZATIONS_KEY, `not valid YAML: ${(err as Error).message}`);
  }
  if (block === null || block === undefined || block === '') return;
  if (typeof block !== 'object' || Array.isArray(block))
    throw new HealthConfigError(CUSTOMIZATIONS_KEY, 'must map <group>/<kind> to its customizations');
  for (const [gk, entry] of Object.entries(block as Record<string, unknown>)) {
    const where = `${CUSTOMIZATIONS_KEY}: ${gk}`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      throw new HealthConfigError(where, 'must be a map (health.lua, health.lua.useOpenLibs, …)');
    const e = entry as Record<string, unknown>;
    const lua = e['health.lua'];
    if (lua !== undefined && typeof lua !== 'string')
      throw new HealthConfigError(`${where}: health.lua`, 'must be a string (a Lua script)');
    const open = e['health.lua.useOpenLibs'];
    overrides.set(gk, {
      lua,
      useOpenLibs: open === undefined ? undefined : parseBool(`${where}: health.lua.useOpenLibs`, open),
      source: `${CUSTOMIZATIONS_KEY} ${gk}`,
    });
  }
}

/** The health checks of argocd-cm `data`; throws HealthConfigError naming the key at fault. */
export function healthCustomizationsFromArgoCdCm(data: Record<string, unknown>): HealthCustomization[] {
  const overrides = new Map<string, Override>();
  if (data[CUSTOMIZATIONS_KEY] !== undefined && data[CUSTOMIZATIONS_KEY] !== '')
    fromBlock(data[CUSTOMIZATIONS_KEY], overrides);
  for (const [key, value] of Object.entries(data)) {
    if (!key.startsWith(`${CUSTOMIZATIONS_KEY}.`)) continue;
    const parts = key.split('.');
    if (parts.length < 4) continue;
    const type = parts[2]!;
    if (type !== 'health' && type !== 'useOpenLibs') continue;
    const gk = overrideKeyOf(key, parts.slice(3).join('.'));
    const o = overrides.get(gk) ?? { source: key };
    if (type === 'health') {
      if (typeof value !== 'string') throw new HealthConfigError(key, 'must be a string (a Lua script)');
      o.lua = value;
      o.source = key;
    } else o.useOpenLibs = parseBool(key, value);
    overrides.set(gk, o);
  }
  const out: HealthCustomization[] = [];
  for (const [gk, o] of overrides) {
    if (!o.lua) continue;
    const slash = gk.indexOf('/');
    const [group, kind] = slash < 0 ? ['', gk] : [gk.slice(0, slash), gk.slice(slash + 1)];
    out.push({ group, kind, lua: o.lua, useOpenLibs: o.useOpenLibs === true, source: o.source });
  }
  return out;
}
