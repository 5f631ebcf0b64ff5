// The fault suite's own NATS JetStream cluster: three nats-server nodes on loopback (a current
// nats-server built by test/scripts/obtain-nats-server.sh), each with Capstan's bus users and
// permissions (@capstan/bus-auth), routed to each other, so a scenario may kill and restart nodes.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'nats';
import { busUsers, generatePasswords, inboxPrefixOf, renderNatsConfig } from '@capstan/bus-auth';
import { freePort } from './postgres.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface NatsCluster {
  /** The client URL of node i (services connect to one node; the cluster routes the rest). */
  url(i?: number): string;
  /** Every node's client URL, comma-separated: a client given them all reconnects to a live one. */
  urls(): string;
  namespace: string;
  /** `i` 'all': every node's URL (see urls). */
  env(user: string, i?: number | 'all'): Record<string, string>;
  connection(
    user: string,
    i?: number | 'all',
  ): { url: string; namespace: string; user: string; password: string };
  kill(i: number): Promise<void>;
  start(i: number): Promise<void>;
  /** Resolves when node i answers JetStream requests (its meta group has a leader). */
  ready(i: number): Promise<void>;
  size: number;
  stop(): Promise<void>;
}

export function natsServerBinary(): string {
  return execFileSync('bash', [path.join(here, '../../scripts/obtain-nats-server.sh'), '--print-path'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .toString()
    .trim();
}

export async function startNatsCluster(namespace: string, size = 3): Promise<NatsCluster> {
  const bin = natsServerBinary();
  const dir = mkdtempSync(path.join(tmpdir(), 'capstan-faults-nats-'));
  const users = busUsers({ namespace, extSources: ['git', 'ci'], admin: true });
  const passwords = generatePasswords(users.map((u) => u.user));
  const ports = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routes = await Promise.all(Array.from({ length: size }, () => freePort()));
  const children: (ChildProcess | undefined)[] = [];
  const config = (i: number) =>
    [
      renderNatsConfig({
        host: '127.0.0.1',
        port: ports[i]!,
        storeDir: path.join(dir, `n${i}`),
        users,
        password: (u) => passwords[u]!,
        serverName: `faults-${i}`,
      }),
      `cluster { name: "capstan-faults", listen: "127.0.0.1:${routes[i]}", routes: [${routes
        .filter((_, j) => j !== i)
        .map((p) => `"nats-route://127.0.0.1:${p}"`)
        .join(', ')}] }`,
      '',
    ].join('\n');
  const ready = async (i: number) => {
    for (let t = 0; t < 200; t++) {
      try {
        const nc = await connect({
          servers: `nats://127.0.0.1:${ports[i]}`,
          user: 'admin',
          pass: passwords.admin!,
          inboxPrefix: inboxPrefixOf('admin'),
          reconnect: false,
        });
        // JetStream answers once the meta group has a leader.
        const jsm = await nc.jetstreamManager();
        await jsm.getAccountInfo();
        await nc.close();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    throw new Error(`nats node ${i} did not become ready`);
  };
  const cluster: NatsCluster = {
    url: (i = 0) => `nats://127.0.0.1:${ports[i]}`,
    urls: () => ports.map((_, i) => cluster.url(i)).join(','),
    namespace,
    size,
    ready,
    env: (user, i = 0) => ({
      NATS_URL: i === 'all' ? cluster.urls() : cluster.url(i),
      NATS_USER: user,
      NATS_PASSWORD: passwords[user]!,
      CAPSTAN_BUS_NAMESPACE: namespace,
    }),
    connection: (user, i = 0) => ({
      url: i === 'all' ? cluster.urls() : cluster.url(i),
      namespace,
      user,
      password: passwords[user]!,
    }),
    async start(i) {
      const file = path.join(dir, `n${i}.conf`);
      writeFileSync(file, config(i), { mode: 0o600 });
      children[i] = spawn(bin, ['-c', file], { stdio: 'ignore' });
    },
    async kill(i) {
      const c = children[i];
      if (!c || c.exitCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
      children[i] = undefined;
    },
    async stop() {
      for (let i = 0; i < size; i++) await cluster.kill(i);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  for (let i = 0; i < size; i++) await cluster.start(i);
  await ready(0);
  process.once('exit', () => children.forEach((c) => c?.kill('SIGKILL')));
  return cluster;
}
