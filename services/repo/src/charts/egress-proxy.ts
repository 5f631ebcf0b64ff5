// The egress guard for helm. helm makes its own HTTP calls (repository indexes, chart archives on
// any host an index names, OCI registries and the blob storage they redirect to), so checking the
// repository URL before it runs is not enough. Each helm run gets a forward proxy of its own on
// 127.0.0.1 (HTTPS_PROXY/HTTP_PROXY, with a random token as proxy credentials): every connection
// helm opens — the first one, each redirect, each URL an index names — is resolved here, every
// address checked by the same policy as git (checkouts/egress.ts), and the connection made to a
// checked address, so DNS rebinding between check and connect cannot move it either. The bytes
// coming back are counted against the run's bound; past it the connections are cut.
//
// What it cannot cover: Go's proxy selection never proxies `localhost` and literal loopback
// addresses (golang.org/x/net/http/httpproxy), so a redirect or index URL naming 127.0.0.1 or
// ::1 literally is fetched by helm directly. docs/sources.md says so.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { checkedAddresses, type EgressPolicy } from '../checkouts/egress.js';

export interface EgressProxy {
  /** http://capstan:<token>@127.0.0.1:<port>, for HTTP(S)_PROXY. */
  url: string;
  /** The first refusal (egress or size), to report instead of helm's own message. */
  refusal(): Error | undefined;
  close(): Promise<void>;
}

export class ChartTooLargeError extends Error {}

interface ProxyState {
  token: Buffer;
  policy: EgressPolicy;
  what: string;
  maxBytes: number;
  received: number;
  refusal?: Error;
  sockets: Set<Duplex>;
}

function authorised(state: ProxyState, header: string | undefined): boolean {
  const given = Buffer.from(header ?? '');
  const expected = Buffer.from(
    `Basic ${Buffer.from(`capstan:${state.token.toString('hex')}`).toString('base64')}`,
  );
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Counts bytes from upstream; past the bound every connection of the run is cut. */
function count(state: ProxyState, chunk: Buffer): boolean {
  state.received += chunk.length;
  if (state.received <= state.maxBytes) return true;
  state.refusal ??= new ChartTooLargeError(
    `${state.what}: helm downloaded more than ${state.maxBytes} bytes (chart.max-bytes)`,
  );
  for (const s of state.sockets) s.destroy();
  return false;
}

async function connectChecked(state: ProxyState, host: string, port: number): Promise<net.Socket> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const addresses = await checkedAddresses(state.policy, bare, state.what).catch((err: unknown) => {
    state.refusal ??= err as Error;
    throw err;
  });
  const socket = net.connect({ host: addresses[0] as string, port });
  state.sockets.add(socket);
  socket.on('close', () => state.sockets.delete(socket));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** CONNECT host:port (HTTPS, and OCI registries over TLS): a checked tunnel. */
function onConnect(state: ProxyState, req: http.IncomingMessage, client: Duplex, head: Buffer): void {
  state.sockets.add(client);
  client.on('error', () => undefined);
  if (!authorised(state, req.headers['proxy-authorization'])) {
    client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
    return;
  }
  const target = new URL(`http://${req.url ?? ''}`);
  connectChecked(state, target.hostname, Number(target.port || 443)).then(
    (upstream) => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.on('data', (chunk: Buffer) => {
        if (count(state, chunk)) client.write(chunk);
      });
      upstream.on('end', () => client.end());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream);
    },
    () => client.end('HTTP/1.1 403 Forbidden\r\n\r\n'),
  );
}

/** Plain HTTP through the proxy (absolute-URI requests): forwarded to a checked address, no redirect followed. */
function onRequest(state: ProxyState, req: http.IncomingMessage, res: http.ServerResponse): void {
  if (!authorised(state, req.headers['proxy-authorization'])) {
    res.writeHead(407).end();
    return;
  }
  let target: URL;
  try {
    target = new URL(req.url ?? '');
  } catch {
    res.writeHead(400).end();
    return;
  }
  if (target.protocol !== 'http:') {
    res.writeHead(400).end();
    return;
  }
  const headers = { ...req.headers };
  delete headers['proxy-authorization'];
  delete headers['proxy-connection'];
  connectChecked(state, target.hostname, Number(target.port || 80)).then(
    (socket) => {
      const upstream = http.request(
        {
          createConnection: () => socket,
          method: req.method,
          path: `${target.pathname}${target.search}`,
          headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.on('data', (chunk: Buffer) => {
            if (count(state, chunk)) res.write(chunk);
          });
          up.on('end', () => res.end());
          up.on('error', () => res.destroy());
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    },
    () => res.writeHead(403).end(),
  );
}

/** Starts a proxy for one helm run. */
export async function startEgressProxy(opts: {
  policy: EgressPolicy;
  maxBytes: number;
  what: string;
}): Promise<EgressProxy> {
  const state: ProxyState = {
    token: randomBytes(16),
    policy: opts.policy,
    what: opts.what,
    maxBytes: opts.maxBytes,
    received: 0,
    sockets: new Set(),
  };
  const server = http.createServer((req, res) => onRequest(state, req, res));
  server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) =>
    onConnect(state, req, socket, head),
  );
  server.on('connection', (s: net.Socket) => {
    state.sockets.add(s);
    s.on('close', () => state.sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://capstan:${state.token.toString('hex')}@127.0.0.1:${port}`,
    refusal: () => state.refusal,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of state.sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
