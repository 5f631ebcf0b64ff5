// deploy/docker-compose.yml: parses, every service health-checked (the four on /readyz), NATS with the
// generated bus users, sync impersonating, each service's environment (generated secrets
// interpolated as compose does) one the service accepts, and every variable the file requires
// (${X:?...}) listed in deploy/.env.example.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { checkEnvironment, services } from './environment.mjs';
import { check, failures, readEnvFile } from './report.mjs';

/** `dotenv`: the .env generate-secrets.sh wrote (in a scratch copy of deploy/). */
export function checkCompose(deployDir, dotenv) {
  const text = readFileSync(path.join(deployDir, 'docker-compose.yml'), 'utf8');
  const compose = parse(text, { merge: true });
  checkRequiredVariables(text, readEnvFile(path.join(deployDir, '.env.example')), dotenv);
  for (const name of ['nats', 'postgres', 'k3s', ...services])
    check(compose.services[name]?.healthcheck?.test, `compose: ${name} has no healthcheck`);
  checkNats(deployDir, compose);
  const interpolate = interpolator(dotenv);
  for (const service of services) {
    const svc = compose.services[service];
    check(
      svc.healthcheck.test.join(' ').includes('/readyz'),
      `compose: ${service} healthcheck is not /readyz`,
    );
    check(
      svc.read_only === true && svc.environment.SERVICE === service,
      `compose: ${service} image settings`,
    );
    const env = Object.fromEntries(Object.entries(svc.environment).map(([k, v]) => [k, interpolate(v)]));
    checkEnvironment(`compose ${service}`, service, env);
    for (const dep of Object.keys(svc.depends_on ?? {}))
      check(compose.services[dep], `compose: ${service} depends on unknown ${dep}`);
  }
  check(
    compose.services.sync.environment.CAPSTAN_APPLICATION_SYNC_IMPERSONATION_ENABLED === 'true',
    'compose: impersonation not enabled',
  );
  console.log(
    `docker-compose.yml: ${Object.keys(compose.services).length} services parsed, environments accepted by each service`,
  );
}

/** Every ${X:?...} the compose file requires is in .env.example and written by generate-secrets.sh. */
function checkRequiredVariables(text, example, dotenv) {
  const required = new Set([...text.matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((m) => m[1]));
  for (const name of required) {
    check(name in example, `deploy/.env.example lacks ${name}, which docker-compose.yml requires`);
    check(name in dotenv, `generate-secrets.sh does not write ${name}, which docker-compose.yml requires`);
  }
  for (const name of Object.keys(example))
    check(required.has(name), `deploy/.env.example lists ${name}, which docker-compose.yml does not require`);
}

/** NATS runs with the generated bus users and permissions (libs/bus-auth): JetStream on, no anonymous
 * access, each service its own user. */
function checkNats(deployDir, compose) {
  const natsConfig = readFileSync(path.join(deployDir, 'nats', 'nats-server.conf'), 'utf8');
  check(
    compose.services.nats.command.includes('--config=/etc/nats/nats-server.conf') &&
      compose.services.nats.volumes.some((v) => String(v).startsWith('./nats/nats-server.conf:')),
    'compose: NATS without deploy/nats/nats-server.conf',
  );
  check(/jetstream \{/.test(natsConfig), 'compose: NATS without JetStream');
  check(!/no_auth_user/.test(natsConfig) && /authorization \{/.test(natsConfig), 'NATS: anonymous access');
  for (const service of services)
    check(
      compose.services[service]?.environment?.NATS_USER === service,
      `compose: ${service} has no NATS_USER ${service}`,
    );
}

/** compose's own interpolation, enough for this file: ${VAR}, ${VAR:-default}, ${VAR:?message}. */
function interpolator(dotenv) {
  return (s) =>
    String(s).replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_, name, op, arg) => {
      // Single quotes: literal; double quotes: \n is a newline (the PEM keys), as compose reads them.
      const raw = dotenv[name];
      const v = /^"(.*)"$/.test(raw ?? '')
        ? raw.slice(1, -1).replace(/\\n/g, '\n')
        : raw?.replace(/^'(.*)'$/, '$1');
      if (v !== undefined && v !== '') return v;
      if (op === '?') failures.push(`compose: ${name} unset (${arg})`);
      return op === '-' ? arg : '';
    });
}
