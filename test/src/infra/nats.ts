// A real NATS with JetStream for tests: NATS_URL when set, testcontainers where Docker is present,
// otherwise the local server on loopback. Isolation comes from a unique bus namespace per test: the
// namespace prefixes every subject and stream, so tests share one server without seeing each other.
import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { dockerAvailable } from './docker.js';

const LOCAL_DEFAULT = 'nats://127.0.0.1:4222';

let serverUrl: Promise<string> | undefined;

async function startContainer(): Promise<string> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer('nats:2.11-alpine')
    .withCommand(['-js'])
    .withExposedPorts(4222)
    .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
    .start();
  return `nats://${container.getHost()}:${container.getMappedPort(4222)}`;
}

export function natsServerUrl(): Promise<string> {
  serverUrl ??= (async () => {
    if (process.env.NATS_URL) return process.env.NATS_URL;
    if (!process.env.CAPSTAN_NO_TESTCONTAINERS && dockerAvailable()) return startContainer();
    return LOCAL_DEFAULT;
  })();
  return serverUrl;
}

export interface TestBus {
  url: string;
  /** Unique namespace: pass it as `bus.namespace` to services and `connectBus`. */
  namespace: string;
  /** Deletes the namespace's streams (and with them its consumers). */
  cleanup(): Promise<void>;
}

export async function createTestBus(prefix = 't'): Promise<TestBus> {
  const url = await natsServerUrl();
  const namespace = `${prefix}${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  return {
    url,
    namespace,
    async cleanup() {
      const nc: NatsConnection = await connect({ servers: url });
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
}
