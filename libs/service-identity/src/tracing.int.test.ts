// Trace context across an internal gRPC call over real mutual TLS: the caller's span goes in the
// call's metadata (ServiceClient), the callee's server span (inServerSpan) continues that trace,
// and both reach an OTLP/HTTP receiver.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeGenericClientConstructor, Server, type Metadata, type ServiceDefinition } from '@grpc/grpc-js';
import { currentTraceparent, inSpan, startTracing, type Tracing } from '@capstan/service';
import { makeServicePki, type ServicePki } from '@capstan/test/infra';
import { ServiceClient } from './client.js';
import { inServerSpan } from './server.js';
import { serverCredentials, type TlsMaterial } from './tls.js';

const codec = { serialize: (s: string) => Buffer.from(s), deserialize: (b: Buffer) => b.toString() };
const definition: ServiceDefinition = {
  work: {
    path: '/test.Traced/Work',
    requestStream: false,
    responseStream: false,
    requestSerialize: codec.serialize,
    requestDeserialize: codec.deserialize,
    responseSerialize: codec.serialize,
    responseDeserialize: codec.deserialize,
  },
};
const Client = makeGenericClientConstructor(definition, 'Traced');

let dir: string;
let pki: ServicePki;
let collector: HttpServer;
let tracing: Tracing;
const bodies: string[] = [];
const material = (s: string): TlsMaterial => ({
  ca: readFileSync(pki.caFile),
  cert: readFileSync(pki.services[s]!.certFile),
  key: readFileSync(pki.services[s]!.keyFile),
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'capstan-trace-pki-'));
  pki = await makeServicePki(dir, ['repo', 'api'], { days: 2 });
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  tracing = startTracing('identity-test', {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
  })!;
});
afterAll(async () => {
  await tracing?.shutdown();
  collector?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('trace context over internal gRPC', () => {
  it("continues the caller's trace in the callee's server span", async () => {
    const server = new Server();
    server.addService(definition, {
      work: (call: { metadata: Metadata }, cb: (e: null, v: string) => void) =>
        void inServerSpan('repo', 'work', call.metadata, async () => currentTraceparent() ?? '').then((tp) =>
          cb(null, tp),
        ),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', serverCredentials(material('repo'), true), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    const identity = new ServiceClient({ token: 'api-token', tls: material('api') });
    let caller = '';
    const seen = await inSpan('api/operation', {}, async () => {
      caller = currentTraceparent()!;
      const c = new Client(`127.0.0.1:${port}`, identity.credentials) as unknown as {
        work(
          req: string,
          md: Metadata,
          opts: { deadline: number },
          cb: (e: Error | null, v: string) => void,
        ): void;
        close(): void;
      };
      return new Promise<string>((resolve, reject) =>
        c.work('x', identity.metadata(), { deadline: Date.now() + 5000 }, (e, v) => {
          c.close();
          if (e) reject(e);
          else resolve(v);
        }),
      );
    });
    server.forceShutdown();
    const [, traceId, callerSpan] = caller.split('-');
    expect(seen.split('-')[1]).toBe(traceId);
    expect(seen.split('-')[2]).not.toBe(callerSpan);
    await tracing.shutdown();
    const spans = bodies
      .map(
        (b) => JSON.parse(b) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] },
      )
      .flatMap((b) => b.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    const serverSpan = spans.find((s) => s.name === 'repo/work');
    expect(serverSpan).toMatchObject({ traceId, parentSpanId: callerSpan, kind: 2 });
  });
});
