// /healthz (the process is alive), /readyz (every readiness check passes) and /metrics (Prometheus).
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export type ReadinessCheck = () => Promise<boolean> | boolean;

export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startOpsServer(options: {
  host: string;
  port: number;
  registry: Registry;
  readiness: Map<string, ReadinessCheck>;
  isShuttingDown: () => boolean;
}): Promise<OpsServer> {
  const app: FastifyInstance = Fastify({ logger: false });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const checks: Record<string, boolean> = {};
    for (const [name, check] of options.readiness) {
      try {
        checks[name] = await check();
      } catch {
        checks[name] = false;
      }
    }
    const ready = !options.isShuttingDown() && Object.values(checks).every(Boolean);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
  });
  app.get('/metrics', async (_req, reply) => {
    return reply.type(options.registry.contentType).send(await options.registry.metrics());
  });
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return { port, close: () => app.close() };
}
