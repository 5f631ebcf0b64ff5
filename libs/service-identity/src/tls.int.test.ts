// Real mutual TLS with certificates made by makeServicePki (openssl): a raw gRPC service whose
// handler reports the peer's service; clients with, without and with foreign certificates.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, makeGenericClientConstructor, Server, type ServiceDefinition } from '@grpc/grpc-js';
import { makeServicePki, type ServicePki } from '@capstan/test/infra';
import {
  channelCredentials,
  listenInternal,
  peerService,
  serverCredentials,
  type TlsMaterial,
} from './tls.js';

const codec = { serialize: (s: string) => Buffer.from(s), deserialize: (b: Buffer) => b.toString() };
const definition: ServiceDefinition = {
  whoAmI: {
    path: '/test.Echo/WhoAmI',
    requestStream: false,
    responseStream: false,
    requestSerialize: codec.serialize,
    requestDeserialize: codec.deserialize,
    responseSerialize: codec.serialize,
    responseDeserialize: codec.deserialize,
  },
};
const Client = makeGenericClientConstructor(definition, 'Echo');

let dir: string;
let other: string;
let pki: ServicePki;
const material = (p: ServicePki, s: string): TlsMaterial => ({
  ca: readFileSync(p.caFile),
  cert: readFileSync(p.services[s]!.certFile),
  key: readFileSync(p.services[s]!.keyFile),
});

async function serve(require: boolean): Promise<{ port: number; server: Server; stop(): Promise<void> }> {
  const server = new Server();
  server.addService(definition, {
    whoAmI: (call: { getAuthContext(): unknown }, cb: (e: null, v: string) => void) =>
      cb(null, peerService(call as never) ?? '<none>'),
  });
  // Required: as every internal server listens (listenInternal).
  if (require) return { ...(await listenInternal(server, '127.0.0.1:0', material(pki, 'repo'))), server };
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', serverCredentials(material(pki, 'repo'), false), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { port, server, stop: async () => server.forceShutdown() };
}

function ask(port: number, creds: ReturnType<typeof credentials.createInsecure>): Promise<string> {
  const c = new Client(`127.0.0.1:${port}`, creds) as unknown as {
    whoAmI(req: string, opts: { deadline: number }, cb: (e: Error | null, v: string) => void): void;
    close(): void;
  };
  return new Promise<string>((resolve, reject) =>
    c.whoAmI('hello', { deadline: Date.now() + 5000 }, (e, v) => {
      c.close();
      if (e) reject(e);
      else resolve(v);
    }),
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'capstan-pki-'));
  other = mkdtempSync(join(tmpdir(), 'capstan-pki-other-'));
  pki = await makeServicePki(dir, ['repo', 'sync', 'api'], { days: 2 });
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(other, { recursive: true, force: true });
});

describe('mutual TLS between services', () => {
  it('writes keys mode 600', () => {
    expect(statSync(pki.services.sync!.keyFile).mode & 0o777).toBe(0o600);
  });

  it('names the calling service from its verified certificate', async () => {
    const { port, stop } = await serve(true);
    try {
      await expect(ask(port, channelCredentials(material(pki, 'sync')))).resolves.toBe('sync');
    } finally {
      await stop();
    }
  });

  it('refuses a connection without a client certificate, or with one of another CA, when required', async () => {
    const { port, server } = await serve(true);
    const foreign = await makeServicePki(other, ['sync'], { days: 2 });
    try {
      await expect(ask(port, credentials.createSsl(readFileSync(pki.caFile)))).rejects.toThrow();
      await expect(ask(port, credentials.createInsecure())).rejects.toThrow();
      const forged = { ...material(foreign, 'sync'), ca: readFileSync(pki.caFile) };
      await expect(ask(port, channelCredentials(forged))).rejects.toThrow();
    } finally {
      server.forceShutdown();
    }
  });

  it('serves callers without a certificate when not required, without a service identity', async () => {
    const { port, server } = await serve(false);
    const foreign = await makeServicePki(other, ['sync'], { days: 2 });
    try {
      await expect(ask(port, credentials.createSsl(readFileSync(pki.caFile)))).resolves.toBe('<none>');
      const forged = { ...material(foreign, 'sync'), ca: readFileSync(pki.caFile) };
      await expect(ask(port, channelCredentials(forged))).resolves.toBe('<none>');
    } finally {
      server.forceShutdown();
    }
  });
});
