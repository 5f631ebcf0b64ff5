import { request } from 'node:https';
import { createServer } from 'node:net';

const portsHandedOut = new Set<number>();

/** Free loopback TCP ports, distinct from every port this process handed out before. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = [];
  const ports: number[] = [];
  try {
    while (ports.length < count) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      if (!portsHandedOut.has(address.port)) ports.push(address.port);
    }
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
  for (const p of ports) portsHandedOut.add(p);
  return ports;
}

/** A GET against an API server that trusts only its own CA (readiness, audit sentinels). */
export function httpGet(url: string, ca: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { ca, headers: token ? { Authorization: `Bearer ${token}` } : {}, timeout: 2000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}
