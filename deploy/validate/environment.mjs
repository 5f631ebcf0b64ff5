// Every environment variable handed to a service must be one that service reads (its settings and
// @capstan/service's common ones, from the built packages), and the whole environment must pass the
// service's own configuration loader.
import { commonSettings, envNameOf, loadConfig } from '@capstan/service';
import { apiSettings } from '@capstan/api';
import { repoSettings } from '@capstan/repo';
import { syncSettings } from '@capstan/sync';
import { appsetSettings } from '@capstan/appset';
import { check, failures } from './report.mjs';

export const settingsOf = {
  api: apiSettings,
  repo: repoSettings,
  sync: syncSettings,
  appset: appsetSettings,
};
export const services = Object.keys(settingsOf);

/** Read by the image's entrypoint (SERVICE) or by node itself (NODE_OPTIONS), not by a service. */
const entrypointEnv = new Set(['SERVICE', 'NODE_OPTIONS']);
const envNames = (service) =>
  new Set(Object.entries({ ...commonSettings, ...settingsOf[service] }).map(([k, s]) => envNameOf(k, s)));

export function checkEnvironment(where, service, env) {
  const known = envNames(service);
  for (const name of Object.keys(env))
    check(known.has(name) || entrypointEnv.has(name), `${where}: ${service} does not read ${name}`);
  // The loaders take keyrings as strings and parse them at start; a quoting slip in an env file
  // (quotes kept or lost) would only show there, so parse them here as the services will.
  for (const [name, value] of Object.entries(env).filter(([n]) => n.endsWith('_ENCRYPTION_KEYS'))) {
    try {
      const ring = JSON.parse(value);
      check(Buffer.from(ring.keys[ring.active], 'base64').length === 32, `${where}: ${name}: active key`);
    } catch {
      failures.push(`${where}: ${name} is not keyring JSON`);
    }
  }
  try {
    loadConfig({ ...commonSettings, ...settingsOf[service] }, { argv: [], env });
  } catch (err) {
    const detail = (err.violations ?? err.fieldViolations ?? []).map((v) => `${v.field}: ${v.description}`);
    failures.push(`${where}: ${service} refuses its configuration: ${detail.join('; ') || err.message}`);
  }
}
