import { describe, expect, it } from 'vitest';
import { ValidationError } from '@capstan/service';
import { validateRepoUrl } from './repo-url.js';

// The rules themselves are @capstan/policy's (repo-url.unit.test.ts there, with Argo CD's vectors);
// this checks that the service turns them into field-named validation errors.
describe('validateRepoUrl', () => {
  it('returns the trimmed URL when it may be stored', () => {
    expect(validateRepoUrl(' https://h.example/a.git ')).toBe('https://h.example/a.git');
    expect(validateRepoUrl('git@h:org/a.git')).toBe('git@h:org/a.git');
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

  it('refuses option-like, helper and file URLs with the field named', () => {
    expect(() => validateRepoUrl('--upload-pack=touch /tmp/x', 'url')).toThrow(/url: must not/);
    expect(() => validateRepoUrl('ssh://-oProxyCommand=touch%20x/r', 'url')).toThrow(/url: .*host beginning/);
    expect(() => validateRepoUrl('', 'url')).toThrow(/url: must not be empty/);
    expect(() => validateRepoUrl('file:///etc', 'url')).toThrow(/url: must not be a file/);
    expect(() => validateRepoUrl('ext::sh -c touch% /tmp/pwned', 'url')).toThrow(/url:/);
    expect(validateRepoUrl('file:///srv/git/a', 'url', { allowFileUrls: true })).toBe('file:///srv/git/a');
  });
});
