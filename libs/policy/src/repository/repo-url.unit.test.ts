import { describe, expect, it } from 'vitest';
import {
  isSshUrl,
  normalizeRepoUrl,
  redactRepoUrl,
  repoEndpoint,
  repoUrlProblem,
  sameRepoUrl,
} from './repo-url.js';

// Argo CD's util/git TestSameURL: each key names the same repository as its value.
const ARGO_SAME_URL: [string, string][] = [
  ['git@GITHUB.com:argoproj/test', 'git@github.com:argoproj/test.git'],
  ['git@GITHUB.com:argoproj/test.git', 'git@github.com:argoproj/test.git'],
  ['git@GITHUB.com:test', 'git@github.com:test.git'],
  ['git@GITHUB.com:test.git', 'git@github.com:test.git'],
  ['https://GITHUB.com/argoproj/test', 'https://github.com/argoproj/test.git'],
  ['https://GITHUB.com/argoproj/test.git', 'https://github.com/argoproj/test.git'],
  ['https://github.com/FOO', 'https://github.com/foo'],
  ['https://github.com/TEST', 'https://github.com/TEST.git'],
  ['https://github.com/TEST.git', 'https://github.com/TEST.git'],
  ['https://github.com:4443/TEST', 'https://github.com:4443/TEST.git'],
  ['https://github.com:4443/TEST.git', 'https://github.com:4443/TEST'],
  ['ssh://git@GITHUB.com/argoproj/test', 'git@github.com:argoproj/test.git'],
  ['ssh://git@GITHUB.com/argoproj/test.git', 'git@github.com:argoproj/test.git'],
  ['ssh://git@GITHUB.com/test.git', 'git@github.com:test.git'],
  ['ssh://git@github.com/test', 'git@github.com:test.git'],
  [' https://github.com/argoproj/test ', 'https://github.com/argoproj/test.git'],
  ['\thttps://github.com/argoproj/test\n', 'https://github.com/argoproj/test.git'],
  ['https://1234.visualstudio.com/myproj/_git/myrepo', 'https://1234.visualstudio.com/myproj/_git/myrepo'],
  ['https://dev.azure.com/1234/myproj/_git/myrepo', 'https://dev.azure.com/1234/myproj/_git/myrepo'],
];

// Argo CD's util/git TestIsSSHURL.
const ARGO_IS_SSH: [string, boolean][] = [
  ['git://github.com/argoproj/test.git', false],
  ['git@GITHUB.com:argoproj/test.git', true],
  ['git@github.com:test', true],
  ['git@github.com:test.git', true],
  ['https://github.com/argoproj/test', false],
  ['https://github.com/argoproj/test.git', false],
  ['ssh://git@GITHUB.com:argoproj/test', true],
  ['ssh://git@GITHUB.com:argoproj/test.git', true],
  ['ssh://git@github.com:test.git', true],
];

describe('normalizeRepoUrl (Argo CD NormalizeGitURL)', () => {
  it.each(ARGO_SAME_URL)('%j is the same repository as %j', (a, b) => {
    expect(sameRepoUrl(a, b)).toBe(true);
  });

  it.each(ARGO_IS_SSH)('IsSSHURL(%j) is %s', (url, ssh) => {
    expect(isSshUrl(url)).toBe(ssh);
  });

  it('writes the forms Argo CD writes', () => {
    expect(normalizeRepoUrl(' https://GitHub.com/Org/Repo.git ')).toBe('https://github.com/org/repo');
    expect(normalizeRepoUrl('git@github.com:org/repo.git')).toBe('git@github.com/org/repo');
    expect(normalizeRepoUrl('ssh://git@github.com/org/repo')).toBe('git@github.com/org/repo');
  });

  it('drops trailing slashes (beyond Argo CD), before and after .git', () => {
    expect(sameRepoUrl('https://h.example/org/repo/', 'https://h.example/org/repo')).toBe(true);
    expect(sameRepoUrl('https://h.example/org/repo.git/', 'https://h.example/org/repo')).toBe(true);
  });

  it('keeps different repositories, ports and schemes apart', () => {
    expect(sameRepoUrl('https://h/a.git', 'https://h/b.git')).toBe(false);
    expect(sameRepoUrl('https://h:4443/a', 'https://h/a')).toBe(false);
    expect(sameRepoUrl('http://h/a', 'https://h/a')).toBe(false);
    expect(sameRepoUrl('https://h/org/repo', 'https://h/org/repo-other')).toBe(false);
  });
});

describe('repoUrlProblem', () => {
  it.each([
    'https://h.example/a.git',
    'http://127.0.0.1:8080/a.git',
    'ssh://git@h/a.git',
    'ssh://git@h:2222/org/a.git',
    'git@h:org/a.git',
    'https://dev.azure.com/1234/myproj/_git/myrepo',
    'https://h.example/org/a-b/c-',
  ])('accepts %j', (url) => {
    expect(repoUrlProblem(url)).toBeUndefined();
  });

  it.each([
    ['', /empty/],
    ['--upload-pack=touch /tmp/x', /whitespace|begin with "-"/],
    ['--upload-pack=touch', /begin with "-"/],
    ['-oProxyCommand=x', /begin with "-"/],
    ['ssh://-oProxyCommand=touch%20/tmp/pwned/x', /host beginning with "-"/],
    ['ssh://-oProxyCommand=touch@h/x', /user beginning with "-"/],
    ['ssh://git@-oProxyCommand=x/repo', /host beginning with "-"/],
    ['git@-oProxyCommand=x:repo', /host beginning with "-"/],
    ['-oProxyCommand=x@h:repo', /begin with "-"/],
    ['https://h.example/--upload-pack=x', /path segment beginning with "-"/],
    ['https://h.example/org/%2Dx', /path segment beginning with "-"/],
    ['git@h:--upload-pack=x', /path segment beginning with "-"/],
    ['ext::sh -c touch% /tmp/pwned', /whitespace/],
    ['ext::sh', /transport helper/],
    ['fd::17', /transport helper/],
    ['FD::17/x', /transport helper/],
    ['file:///etc', /file:\/\//],
    ['FILE:///etc', /file:\/\//],
    ['/srv/git/repo', /must be an http/],
    ['https://h.example/a\u0000b', /control/],
    ['https://h.example/a b', /whitespace/],
    ['https://user:hunter2-canary@h.example/a.git', /password/],
    ['https://user@h.example/a.git', /username/],
  ])('refuses %j', (url, why) => {
    const problem = repoUrlProblem(url);
    expect(problem).toMatch(why);
    expect(problem).not.toContain('hunter2-canary');
  });

  it('accepts file:///absolute paths only when the operator allows them', () => {
    expect(repoUrlProblem('file:///srv/git/repo.git', { allowFileUrls: true })).toBeUndefined();
    expect(repoUrlProblem('file://host/srv/git', { allowFileUrls: true })).toMatch(/file:\/\/\/absolute/);
    expect(repoUrlProblem('file:///srv/-x', { allowFileUrls: true })).toMatch(/beginning with "-"/);
  });

  it('redacts passwords for display', () => {
    expect(redactRepoUrl('https://u:p@h/a.git')).toBe('https://u:redacted@h/a.git');
  });
});

describe('repoEndpoint (where git connects)', () => {
  it.each([
    ['https://github.com/org/repo.git', { transport: 'https', host: 'github.com', port: 443 }],
    ['http://git.internal:8080/r', { transport: 'http', host: 'git.internal', port: 8080 }],
    ['HTTPS://[::1]:3000/r', { transport: 'https', host: '::1', port: 3000 }],
    ['ssh://git@example.com/org/repo', { transport: 'ssh', host: 'example.com', port: 22 }],
    ['ssh://git@example.com:2222/org/repo', { transport: 'ssh', host: 'example.com', port: 2222 }],
    ['git@169.254.169.254:org/repo.git', { transport: 'ssh', host: '169.254.169.254', port: 22 }],
    ['http://2130706433/r', { transport: 'http', host: '127.0.0.1', port: 80 }],
  ])('%s', (url, endpoint) => {
    expect(repoEndpoint(url)).toEqual(endpoint);
  });

  it('has none for local and unparseable URLs', () => {
    expect(repoEndpoint('file:///srv/git/r')).toBeUndefined();
    expect(repoEndpoint('https://')).toBeUndefined();
    expect(repoEndpoint('not a url')).toBeUndefined();
  });
});
