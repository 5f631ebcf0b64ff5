// The git server of the compose test (deploy/ci/compose.ci.yml): the demo's repository content
// (/srv/src, read-only) committed into a bare repository on branch main, served over smart HTTP by
// git's own `git http-backend` behind HTTP basic auth (GIT_USERNAME / GIT_PASSWORD), so the repo
// service fetches with a real repository credential. Runs in the Capstan image (node and git).
import { execFileSync, spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { cpSync, mkdtempSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const { GIT_USERNAME, GIT_PASSWORD, GIT_REPOSITORY = 'guestbook.git', PORT = '8080' } = process.env;
if (!GIT_USERNAME || !GIT_PASSWORD) throw new Error('set GIT_USERNAME and GIT_PASSWORD');
const root = mkdtempSync('/tmp/git-');
const env = { ...process.env, HOME: root, GIT_CONFIG_NOSYSTEM: '1' };
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] });

const work = path.join(root, 'work');
cpSync('/srv/src', work, { recursive: true });
git(work, 'init', '-q', '-b', 'main');
git(work, 'add', '-A');
git(work, '-c', 'user.name=ci', '-c', 'user.email=ci@capstan.invalid', 'commit', '-qm', 'demo content');
git(root, 'clone', '-q', '--bare', work, path.join(root, 'srv', GIT_REPOSITORY));

const expected = Buffer.from(`Basic ${Buffer.from(`${GIT_USERNAME}:${GIT_PASSWORD}`).toString('base64')}`);
const authorised = (header = '') =>
  Buffer.byteLength(header) === expected.length && timingSafeEqual(Buffer.from(header), expected);

http
  .createServer((req, res) => {
    if (req.url === '/healthz') return res.end('ok');
    if (!authorised(req.headers.authorization)) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' });
      return res.end();
    }
    const url = new URL(req.url, 'http://git');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        ...env,
        GIT_PROJECT_ROOT: path.join(root, 'srv'),
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: req.method,
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: req.headers['git-protocol'] ?? '',
        REMOTE_USER: GIT_USERNAME,
      },
    });
    req.pipe(cgi.stdin);
    // CGI output: headers, a blank line, then the body.
    let head = Buffer.alloc(0);
    let body = false;
    cgi.stdout.on('data', (chunk) => {
      if (body) return res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const [name, ...rest] = line.split(':');
        if (name.toLowerCase() === 'status') status = Number.parseInt(rest.join(':'), 10);
        else res.setHeader(name, rest.join(':').trim());
      }
      res.writeHead(status);
      body = true;
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  })
  .listen(Number(PORT), '0.0.0.0', () => console.log(`git server: /${GIT_REPOSITORY} on :${PORT}`));
