import { describe, expect, it } from 'vitest';
import { ValidationError } from '@capstan/service';
import { normalizeRepoUrl, redactRepoUrl, sameRepoUrl, validateRepoUrl } from './repo-url.js';

describe('repository URLs', () => {
  it('normalises like Argo CD', () => {
    expect(normalizeRepoUrl(' https://GitHub.com/Org/Repo.git ')).toBe('https://github.com/org/repo');
    expect(normalizeRepoUrl('git@github.com:org/repo.git')).toBe('git@github.com/org/repo');
    expect(sameRepoUrl('git@github.com:org/repo.git', 'ssh://git@github.com/org/repo')).toBe(true);
    expect(sameRepoUrl('https://h/a.git', 'https://h/b.git')).toBe(false);
  });

  it('accepts http(s), ssh and scp-like URLs', () => {
    for (const url of [
      'https://h.example/a.git',
      'http://127.0.0.1:8080/a.git',
      'ssh://git@h/a.git',
      'git@h:org/a.git',
    ]) {
      expect(validateRepoUrl(url)).toBe(url);
    }
  });

  it('refuses URLs that carry secrets without echoing them', () => {
    try {
      validateRepoUrl('https://user:hunter2-canary@h.example/a.git', 'spec.url');
      expect.fail('accepted a URL with a password');
    } catch (err) {
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).violations[0]?.field).toBe('spec.url');
      expect(String((err as Error).message)).not.toContain('hunter2-canary');
    }
  });

  it('refuses option-like, empty and foreign-scheme URLs with the field named', () => {
    expect(() => validateRepoUrl('--upload-pack=touch /tmp/x', 'url')).toThrow(/url: must not/);
    expect(() => validateRepoUrl('', 'url')).toThrow(/url: must not be empty/);
    expect(() => validateRepoUrl('file:///etc', 'url')).toThrow(/url: must be an http/);
    expect(() => validateRepoUrl('ext::sh -c touch% /tmp/pwned', 'url')).toThrow(/url:/);
  });

  it('redacts passwords for display', () => {
    expect(redactRepoUrl('https://u:p@h/a.git')).toBe('https://u:redacted@h/a.git');
  });
});
