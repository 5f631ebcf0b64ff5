// The nats-server configuration of deploy/ (docker compose and Kubernetes): namespace `capstan`,
// the services, one external source (`git`, for push announcements; add yours here and to
// bus.ext-accounts) and admin; each password a `$NATS_PASSWORD_<USER>` variable that nats-server
// reads from its environment (deploy/generate-secrets.sh writes them). `--write` regenerates
// deploy/nats/nats-server.conf (docker compose) and its copy deploy/k8s/nats/nats-server.conf
// (kustomize reads files only below its own directory); the unit test fails while either is stale.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { busUsers, passwordEnvOf, renderNatsConfig } from './nats-config.js';

const deployDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'deploy');
export const deployConfigPaths = [
  join(deployDir, 'nats', 'nats-server.conf'),
  join(deployDir, 'k8s', 'nats', 'nats-server.conf'),
];

export const DEPLOY_EXT_SOURCES = ['git'] as const;

export function renderDeployConfig(): string {
  return renderNatsConfig({
    host: '0.0.0.0',
    port: 4222,
    storeDir: '/data',
    users: busUsers({ namespace: 'capstan', extSources: DEPLOY_EXT_SOURCES, admin: true }),
    password: (u) => ({ env: passwordEnvOf(u) }),
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const path of deployConfigPaths) {
    if (process.argv.includes('--write')) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, renderDeployConfig());
      process.stdout.write(`wrote ${path}\n`);
    } else if (readFileSync(path, 'utf8') !== renderDeployConfig()) {
      process.stderr.write(`${path} is stale: npm run gen:deploy -w @capstan/bus-auth\n`);
      process.exitCode = 1;
    }
  }
}
