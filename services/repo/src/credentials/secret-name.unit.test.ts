import { describe, expect, it } from 'vitest';
import { credentialSecretName, fnv1a32 } from './secret-name.js';

describe('credentialSecretName', () => {
  // Vectors from Argo CD's util/db TestRepoURLToSecretName (URL hashed as given, then project).
  it.each([
    ['git://git@github.com:argoproj/ARGO-cd.git', '', 'repo-83273445'],
    ['git://git@github.com:argoproj/ARGO-cd.git', 'foobar', 'repo-2733415816'],
    ['https://github.com/argoproj/ARGO-cd', '', 'repo-1890113693'],
    ['https://github.com/argoproj/ARGO-cd', 'foobar', 'repo-4161185408'],
    ['https://github.com/argoproj/argo-cd', '', 'repo-42374749'],
    ['https://github.com/argoproj/argo-cd', 'foobar', 'repo-1894545728'],
    ['https://github.com/argoproj/argo-cd.git', '', 'repo-821842295'],
    ['https://github.com/argoproj/argo_cd.git', '', 'repo-1049844989'],
    ['ssh://git@github.com/argoproj/argo-cd.git', '', 'repo-3569564120'],
  ])('%s in project %j is %s, as Argo CD names it', (url, project, name) => {
    expect(credentialSecretName(url, project)).toBe(name);
  });

  it('hashes the standard FNV-1a test vectors', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    expect(fnv1a32('foo', 'bar')).toBe(fnv1a32('foobar'));
  });

  it('hashes UTF-8 bytes, not UTF-16 code units', () => {
    expect(fnv1a32('é')).not.toBe(fnv1a32('\u00e9'.normalize('NFD')));
    expect(fnv1a32('é')).toBe(fnv1a32(Buffer.from([0xc3, 0xa9]).toString('utf8')));
  });
});
