// Runs the test git server as a process of its own, for the local demo (`npm run up`) and for
// looking around by hand: it serves one or more repositories seeded from directories on disk and
// keeps running until SIGINT/SIGTERM. The basic-auth credentials come from the environment, never
// argv (CAPSTAN_GIT_USERNAME / CAPSTAN_GIT_PASSWORD; both empty: anonymous read).
//
// Usage: node test/dist/git/cli.js --root .capstan/git --repo guestbook.git=scripts/demo/guestbook
//          [--repo other.git=dir …] [--out .capstan/git/server.json]
// Writes `server.json` ({ baseUrl, repositories: [{ name, url, sha }] }, no secrets) and logs one
// line per request (repository, service, authenticated username, HTTP status).
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startGitServer, type BasicCredential } from './server.js';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: '.capstan/git' },
    repo: { type: 'string', multiple: true, default: [] },
    out: { type: 'string' },
  },
});

/** Every file under `dir`, keyed by its path relative to `dir` (forward slashes). */
function filesOf(dir: string, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) Object.assign(files, filesOf(dir, rel));
    else if (entry.isFile()) files[rel] = readFileSync(path.join(dir, rel), 'utf8');
  }
  return files;
}

const root = path.resolve(values.root ?? '.capstan/git');
const out = path.resolve(values.out ?? path.join(root, 'server.json'));
const specs = (values.repo ?? []).map((spec) => {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new Error(`--repo expects NAME.git=DIRECTORY, got ${JSON.stringify(spec)}`);
  const seed = path.resolve(spec.slice(eq + 1));
  if (!statSync(seed, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`--repo ${spec}: ${seed} is not a directory`);
  return { name: spec.slice(0, eq), seed };
});

const username = process.env.CAPSTAN_GIT_USERNAME ?? '';
const password = process.env.CAPSTAN_GIT_PASSWORD ?? '';
const credentials: BasicCredential[] = username && password ? [{ username, password }] : [];

// The server owns `srv` (bare repositories) and `work` under the root; a previous run that was
// killed may have left them behind.
mkdirSync(root, { recursive: true });
for (const dir of ['srv', 'work']) rmSync(path.join(root, dir), { recursive: true, force: true });

const server = await startGitServer({ root });
const repositories: { name: string; url: string; sha: string }[] = [];
try {
  for (const { name, seed } of specs) {
    const repo = await server.createRepository(name, { credentials });
    const sha = await repo.commit(filesOf(seed), { message: `${name}: initial manifests` });
    repositories.push({ name, url: repo.url, sha });
  }
} catch (err) {
  await server.close();
  console.error(`[capstan git] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
writeFileSync(out, JSON.stringify({ baseUrl: server.baseUrl, repositories }, null, 2) + '\n');
console.log(
  `[capstan git] serving ${repositories.map((r) => `${r.url} (${r.sha.slice(0, 7)})`).join(', ') || 'no repositories'}` +
    (credentials.length ? ` with basic auth for ${username}` : ' anonymously'),
);

// One line per request: who fetched what, and what git answered.
let logged = 0;
const requestLog = setInterval(() => {
  for (const r of server.requests.slice(logged))
    console.log(
      `[capstan git] ${r.repository || '-'} ${r.service ?? '-'} user=${r.username ?? '-'} status=${r.status}`,
    );
  logged = server.requests.length;
}, 250);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    clearInterval(requestLog);
    rmSync(out, { force: true });
    void server.close().then(() => process.exit(0));
  });
}
