import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import {
  annotateSpan,
  contextOfTraceparent,
  currentTraceparent,
  inSpan,
  otlpTracesUrl,
  startTracing,
} from './tracing.js';

describe('otlpTracesUrl', () => {
  it('follows the OpenTelemetry environment: traces endpoint, else base + /v1/traces, else off', () => {
    expect(otlpTracesUrl({})).toBeUndefined();
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe('http://c:4318/v1/traces');
    expect(
      otlpTracesUrl({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/x',
      }),
    ).toBe('http://t/x');
    expect(
      otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }),
    ).toBeUndefined();
  });
});

describe('with tracing off', () => {
  it('runs the work, passes errors on and propagates nothing', async () => {
    expect(await inSpan('x', {}, async () => 42)).toBe(42);
    await expect(inSpan('x', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await inSpan('x', {}, async () => {
      annotateSpan({ a: 1 });
      expect(currentTraceparent()).toBeUndefined();
    });
    expect(trace.getSpanContext(contextOfTraceparent('not-a-traceparent'))).toBeUndefined();
    expect(trace.getSpanContext(contextOfTraceparent(undefined))).toBeUndefined();
  });
});

describe('with an OTLP endpoint', () => {
  it('exports spans over OTLP/HTTP JSON, children continuing a traceparent, errors marked', async () => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const tracing = startTracing('unit', { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` })!;
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    let inner: string | undefined;
    await inSpan(
      'outer',
      { 'capstan.correlation_id': 'c-1' },
      async () => {
        inner = currentTraceparent();
        await inSpan('failing', {}, async () => Promise.reject(new Error('refused'))).catch(() => undefined);
      },
      { parent: contextOfTraceparent(parent) },
    );
    await tracing.shutdown();
    server.close();
    expect(inner).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    const spans = bodies
      .map(
        (b) => JSON.parse(b) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] },
      )
      .flatMap((b) => b.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    const outer = spans.find((s) => s.name === 'outer')!;
    const failing = spans.find((s) => s.name === 'failing')!;
    expect(outer).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      parentSpanId: 'b7ad6b7169203331',
    });
    expect(failing.parentSpanId).toBe(outer.spanId);
    expect(failing.status).toMatchObject({ code: 2, message: 'refused' });
    expect(JSON.stringify(bodies)).toContain('capstan-unit');
  });
});
