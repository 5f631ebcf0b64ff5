import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedGitEnv } from './git-command.js';
import { startGitServer, type GitServer } from './server.js';
import { generateSshKeyPair } from './ssh-transport.js';

const execFileAsync = promisify(execFile);

// A client clone, with credentials given the way a careless client would (in the URL) because
// this test exercises the server, not the repo service's credential handling.
async function clone(url: string, dir: string, auth?: { username: string; password: string }) {
  const target = new URL(url);
  if (auth) {
    target.username = auth.username;
    target.password = auth.password;
  }
  return execFileAsync('git', ['clone', '--quiet', target.toString(), dir], { env: isolatedGitEnv });
}

describe('test git server', () => {
  let server: GitServer;
  let scratch: string;

  beforeAll(async () => {
    server = await startGitServer({ ssh: true });
    scratch = await mkdtemp(path.join(os.tmpdir(), 'capstan-git-client-'));
  });
  afterAll(async () => {
    await server?.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it('serves commits, branches and tags over smart HTTP to an authorised client', async () => {
    const repo = await server.createRepository('team-a/apps.git', {
      credentials: [{ username: 'alice', password: 'pw-a' }],
    });
    const first = await repo.commit({ 'guestbook/deploy.yaml': 'kind: Deployment\n' });
    const second = await repo.commit(
      { 'guestbook/deploy.yaml': 'kind: Deployment\nv: 2\n' },
      { branch: 'next' },
    );
    await repo.tag('v1.0.0', first);
    expect(second).not.toBe(first);
    expect(await repo.sha('next')).toBe(second);
    expect(await repo.sha('v1.0.0')).toBe(first);

    const dir = path.join(scratch, 'ok');
    await clone(repo.url, dir, { username: 'alice', password: 'pw-a' });
    expect(await readFile(path.join(dir, 'guestbook/deploy.yaml'), 'utf8')).toBe('kind: Deployment\n');
    expect(
      server.requests.some(
        (r) => r.repository === 'team-a/apps.git' && r.username === 'alice' && r.status === 200,
      ),
    ).toBe(true);
  });

  it('refuses wrong and missing credentials with 401', async () => {
    const repo = await server.createRepository('team-b/apps.git', {
      credentials: [{ username: 'bob', password: 'pw-b' }],
    });
    await repo.commit({ 'a.yaml': 'a: 1\n' });
    await expect(
      clone(repo.url, path.join(scratch, 'wrong'), { username: 'bob', password: 'nope' }),
    ).rejects.toThrow(/Authentication failed|401/);
    await expect(clone(repo.url, path.join(scratch, 'none'))).rejects.toThrow();
    expect(
      server.requests.filter((r) => r.repository === 'team-b/apps.git' && r.status === 401).length,
    ).toBeGreaterThan(0);
  });

  it('serves anonymous repositories and answers 404 for unknown ones', async () => {
    const repo = await server.createRepository('public.git');
    await repo.commit({ 'x.json': '{}' });
    await clone(repo.url, path.join(scratch, 'public'));
    await expect(clone(`${server.baseUrl}/missing.git`, path.join(scratch, 'missing'))).rejects.toThrow(
      /not found|404/,
    );
  });

  it('rotating credentials takes effect immediately', async () => {
    const repo = await server.createRepository('rotate.git', {
      credentials: [{ username: 'u', password: 'old' }],
    });
    await repo.commit({ 'x.yaml': 'x: 1\n' });
    server.setCredentials('rotate.git', [{ username: 'u', password: 'new' }]);
    await expect(
      clone(repo.url, path.join(scratch, 'old'), { username: 'u', password: 'old' }),
    ).rejects.toThrow();
    await clone(repo.url, path.join(scratch, 'new'), { username: 'u', password: 'new' });
  });

  it('serves repositories over SSH to authorised keys only', async () => {
    const allowed = generateSshKeyPair();
    const other = generateSshKeyPair();
    const unrelated = await server.createRepository('ssh/unrelated.git', { sshKeys: [other.publicKey] });
    const repo = await server.createRepository('ssh/apps.git', { sshKeys: [allowed.publicKey] });
    await repo.commit({ 'a.yaml': 'over: ssh\n' });
    expect(unrelated.sshUrl).toMatch(/^ssh:\/\/git@127\.0\.0\.1:\d+\/ssh\/unrelated\.git$/);
    const knownHosts = path.join(scratch, 'known_hosts');
    await writeFile(knownHosts, `${server.ssh?.knownHostsLine}\n`);
    const sshClone = async (key: string, dir: string) => {
      const keyFile = path.join(scratch, `key-${dir}`);
      await writeFile(keyFile, key, { mode: 0o600 });
      return execFileAsync('git', ['clone', '--quiet', repo.sshUrl, path.join(scratch, dir)], {
        env: {
          ...isolatedGitEnv,
          GIT_SSH_COMMAND: `ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=${knownHosts} -i ${keyFile}`,
        },
      });
    };
    await sshClone(allowed.privateKey, 'ssh-ok');
    expect(await readFile(path.join(scratch, 'ssh-ok', 'a.yaml'), 'utf8')).toBe('over: ssh\n');
    await expect(sshClone(other.privateKey, 'ssh-denied')).rejects.toThrow(
      /Permission to ssh\/apps\.git denied/,
    );
    expect(server.ssh?.requests.map((r) => r.status)).toEqual(['ok', 'denied']);
  });
});
