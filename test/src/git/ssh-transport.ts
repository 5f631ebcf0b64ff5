// The test git server's SSH side: a real SSH server (the ssh2 library, speaking the protocol to the
// machine's OpenSSH client) that authenticates by public key and runs git's own `git upload-pack`
// on the requested repository. Keys are authorised per repository, like deploy keys.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import ssh2 from 'ssh2';
import { isolatedGitEnv } from './git-command.js';

const { Server, utils } = ssh2;

export interface SshKeyPair {
  /** OpenSSH private key (what a client's credential holds). */
  privateKey: string;
  /** `ssh-ed25519 AAAA…` (what a repository authorises). */
  publicKey: string;
}

/**
 * A fresh ed25519 key pair. ssh2's generator drops leading zero bytes of the public key, so about one
 * pair in 256 is one that OpenSSH refuses to load ("error in libcrypto", mscdex/ssh2#1390): such a
 * pair is detected by parsing both halves back and generated again.
 */
export function generateSshKeyPair(): SshKeyPair {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519');
    if (wellFormed(pair.private) && wellFormed(pair.public))
      return { privateKey: pair.private, publicKey: pair.public.trim().split(' ').slice(0, 2).join(' ') };
  }
}

function wellFormed(key: string): boolean {
  const parsed = utils.parseKey(key);
  if (parsed instanceof Error) return false;
  const one = Array.isArray(parsed) ? parsed[0] : parsed;
  // The public key blob of ssh-ed25519: 4+11 bytes of type, 4 of length, 32 of key.
  return one !== undefined && one.getPublicSSH().length === 51;
}

export interface SshRequestRecord {
  repository: string;
  /** The authorised public key used, or null when refused. */
  publicKey: string | null;
  status: 'ok' | 'denied' | 'not-found';
}

export interface SshTransport {
  port: number;
  /** A known_hosts line for this server. */
  knownHostsLine: string;
  requests: SshRequestRecord[];
  close(): Promise<void>;
}

export async function startSshTransport(opts: {
  /** The bare directory of a repository and the public keys authorised for it, or undefined. */
  repository: (name: string) => { bareDir: string; keys: readonly string[] } | undefined;
  /** Every key authorised anywhere (authentication happens before the repository is known). */
  knownKeys: () => readonly string[];
}): Promise<SshTransport> {
  const host = generateSshKeyPair();
  const requests: SshRequestRecord[] = [];
  const server = new Server({ hostKeys: [host.privateKey] }, (client) => {
    let authenticated: string | null = null;
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey') return ctx.reject(['publickey']);
      const offered = `${ctx.key.algo} ${ctx.key.data.toString('base64')}`;
      if (!opts.knownKeys().includes(offered)) return ctx.reject(['publickey']);
      if (!ctx.signature) return ctx.accept();
      const parsed = utils.parseKey(offered);
      if (parsed instanceof Error || !ctx.blob || !parsed.verify(ctx.blob, ctx.signature, ctx.hashAlgo))
        return ctx.reject(['publickey']);
      authenticated = offered;
      ctx.accept();
    });
    client.on('ready', () => {
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        session.on('exec', (accept, _reject, info) => {
          const stream = accept();
          const m = /^git-upload-pack '\/?([^']+)'$/.exec(info.command);
          const name = m?.[1] ?? '';
          const repo = m ? opts.repository(name) : undefined;
          if (!repo) {
            requests.push({ repository: name, publicKey: authenticated, status: 'not-found' });
            stream.stderr.write(`ERROR: Repository not found.\n`);
            stream.exit(1);
            stream.end();
            return;
          }
          if (!authenticated || !repo.keys.includes(authenticated)) {
            requests.push({ repository: name, publicKey: null, status: 'denied' });
            stream.stderr.write(`ERROR: Permission to ${name} denied.\n`);
            stream.exit(1);
            stream.end();
            return;
          }
          requests.push({ repository: name, publicKey: authenticated, status: 'ok' });
          const child = spawn('git', ['upload-pack', repo.bareDir], { env: isolatedGitEnv });
          stream.pipe(child.stdin);
          child.stdout.pipe(stream, { end: false });
          child.stderr.pipe(stream.stderr, { end: false });
          child.stdin.on('error', () => undefined);
          child.on('close', (code) => {
            stream.exit(code ?? 1);
            stream.end();
          });
        });
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    port,
    knownHostsLine: `[127.0.0.1]:${port} ${host.publicKey}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
