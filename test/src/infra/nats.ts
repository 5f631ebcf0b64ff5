// A real, authenticated NATS with JetStream for tests (see nats-server.ts). Isolation comes from a
// unique bus namespace per test: the namespace prefixes every subject and stream, so tests share one
// server without seeing each other. Each service connects as its own bus user, as in production.
import { connect, type ConnectionOptions, type NatsConnection } from 'nats';
import { inboxPrefixOf } from '@capstan/bus-auth';
import { natsTestServer, randomToken } from './nats-server.js';

/** A bus user of the test server: `api`, `sync`, `repo`, `appset`, `ext-git`, `ext-ci`, `admin`. */
export type TestBusUser = 'api' | 'sync' | 'repo' | 'appset' | 'ext-git' | 'ext-ci' | 'admin';

export interface BusCredentials {
  user: string;
  password: string;
}

export interface TestBus {
  url: string;
  /** Unique namespace: pass it as `bus.namespace` to services and `connectBus`. */
  namespace: string;
  /** The user and password of one bus user (none when the server has no authentication). */
  credentials(user: TestBusUser): BusCredentials | undefined;
  /** What `connectBus` needs to connect as this user: `{ url, namespace, user?, password? }`. */
  connection(user: TestBusUser): { url: string; namespace: string; user?: string; password?: string };
  /** The environment of a service process connecting as this user (NATS_URL, NATS_USER, NATS_PASSWORD, CAPSTAN_BUS_NAMESPACE). */
  env(user: TestBusUser): Record<string, string>;
  /** A plain NATS connection as this user (its replies on its own inbox, as its permissions require). */
  connect(user: TestBusUser, options?: Partial<ConnectionOptions>): Promise<NatsConnection>;
  /** Deletes the namespace's streams (and with them its consumers). */
  cleanup(): Promise<void>;
}

/** The URL of the shared test server. */
export async function natsServerUrl(): Promise<string> {
  return (await natsTestServer()).url;
}

export async function createTestBus(prefix = 't'): Promise<TestBus> {
  const { url, passwords } = await natsTestServer();
  const namespace = `${prefix}${Date.now().toString(36)}${randomToken()}`;
  const credentials = (user: TestBusUser): BusCredentials | undefined =>
    passwords[user] ? { user, password: passwords[user] } : undefined;
  const bus: TestBus = {
    url,
    namespace,
    credentials,
    connection(user) {
      const c = credentials(user);
      return { url, namespace, ...(c ? { user: c.user, password: c.password } : {}) };
    },
    env(user) {
      const c = credentials(user);
      return {
        NATS_URL: url,
        CAPSTAN_BUS_NAMESPACE: namespace,
        ...(c ? { NATS_USER: c.user, NATS_PASSWORD: c.password } : {}),
      };
    },
    connect(user, options = {}) {
      const c = credentials(user);
      return connect({
        servers: url,
        ...(c ? { user: c.user, pass: c.password } : {}),
        inboxPrefix: inboxPrefixOf(user),
        ...options,
      });
    },
    async cleanup() {
      const nc = await bus.connect('admin');
      try {
        const jsm = await nc.jetstreamManager();
        for await (const s of jsm.streams.list()) {
          if (s.config.name.toLowerCase().startsWith(`${namespace}_`))
            await jsm.streams.delete(s.config.name);
        }
      } finally {
        await nc.close();
      }
    },
  };
  return bus;
}
