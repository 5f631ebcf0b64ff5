// The service skeleton as a process sees it: ops endpoints over real HTTP, readiness that follows its
// checks and turns off during shutdown, stop functions run in reverse order.
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { z } from 'zod';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startService } from './run-service.js';
import { inSpan } from '../observability/tracing.js';

function captureLogs(): { stream: Writable; lines: () => string[] } {
  const chunks: string[] = [];
  return {
    stream: new Writable({
      write(chunk, _enc, cb) {
        chunks.push(String(chunk));
        cb();
      },
    }),
    lines: () => chunks.join('').split('\n').filter(Boolean),
  };
}

describe('service skeleton', () => {
  it('serves health, readiness and metrics, and stops in reverse order', async () => {
    const order: string[] = [];
    let dbUp = true;
    const logs = captureLogs();
    const svc = await startService({
      name: 'demo',
      settings: { 'demo.greeting': { schema: z.string(), default: 'hi', description: 'greeting' } },
      sources: { argv: [], env: {} },
      logDestination: logs.stream,
      start: async (ctx) => {
        ctx.addReadinessCheck('database', () => dbUp);
        ctx.onShutdown('bus', () => void order.push('bus'));
        ctx.onShutdown('consumers', () => void order.push('consumers'));
        ctx.logger.info({ password: 'hunter2', nested: { token: 'abc' } }, 'configured');
      },
    });
    const base = `http://127.0.0.1:${svc.opsPort}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    dbUp = false;
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toMatchObject({ checks: { database: false } });
    dbUp = true;
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('process_cpu_user_seconds_total{service="demo"}');
    await svc.stop();
    expect(order).toEqual(['consumers', 'bus']);
    await new Promise((r) => setTimeout(r, 50));
    const text = logs.lines().join('\n');
    expect(text).toContain('"msg":"configured"');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('"abc"');
  });

  it('exports traces when an OTLP endpoint is configured, logging where without its password, and stops them last', async () => {
    const received: string[] = [];
    const collector = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    const port = (collector.address() as AddressInfo).port;
    const logs = captureLogs();
    const svc = await startService({
      name: 'demo',
      settings: {},
      sources: {
        argv: [],
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://otel:collector-pw@127.0.0.1:${port}` },
      },
      logDestination: logs.stream,
      start: async () => undefined,
    });
    await inSpan('demo work', {}, async () => undefined);
    await svc.stop();
    collector.close();
    const text = logs.lines().join('\n');
    expect(text).toContain(`"otlpTracesUrl":"http://127.0.0.1:${port}/v1/traces"`);
    expect(text).not.toContain('collector-pw');
    // Stopped last: the span made after start was flushed on stop.
    expect(received.join('')).toContain('"name":"demo work"');
  });

  it('refuses to start on a bad setting, naming it', async () => {
    await expect(
      startService({
        name: 'demo',
        settings: {},
        sources: { argv: ['--http-port', '99999'], env: {} },
        start: async () => {},
      }),
    ).rejects.toThrow(/http\.port: invalid value from flag --http-port/);
  });
});
