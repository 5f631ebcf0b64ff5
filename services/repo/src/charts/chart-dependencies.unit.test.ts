import { describe, expect, it } from 'vitest';
import type { ChartRepository } from './helm-pull.js';
import { dependencyBuildFlags } from './chart-dependencies.js';

const repo = (url: string, auth: ChartRepository['auth'] = null): ChartRepository => ({ url, auth });
const what = 'argocd/umbrella';

describe('dependencyBuildFlags: helm dependency build takes one setting for every repository', () => {
  it('passes nothing when no credential asks for plain HTTP or skipped verification', () => {
    expect(
      dependencyBuildFlags([repo('https://charts.example.com'), repo('oci://r.example.com/c')], what),
    ).toEqual([]);
  });

  it('passes --plain-http when every OCI registry asks for it; Helm repositories do not take part', () => {
    const plain = { username: 'u', password: 'p', ociPlainHttp: true };
    expect(
      dependencyBuildFlags(
        [
          repo('oci://a.example.com/c', plain),
          repo('oci://b.example.com/c', plain),
          repo('https://h.example.com'),
        ],
        what,
      ),
    ).toEqual(['--plain-http']);
  });

  it('passes --insecure-skip-tls-verify only when every repository asks for it', () => {
    const insecure = { username: '', password: '', insecure: true };
    expect(
      dependencyBuildFlags(
        [repo('oci://a.example.com/c', insecure), repo('https://h.example.com', insecure)],
        what,
      ),
    ).toEqual(['--insecure-skip-tls-verify']);
  });

  it('refuses repositories that disagree, naming them and the flag, rather than weaken one', () => {
    const insecure = { username: '', password: '', insecure: true };
    expect(() =>
      dependencyBuildFlags([repo('oci://a.example.com/c', insecure), repo('oci://b.example.com/c')], what),
    ).toThrow(
      'argocd/umbrella: dependency repositories disagree on --insecure-skip-tls-verify (oci://a.example.com/c ask for it, oci://b.example.com/c do not)',
    );
    const plain = { username: 'u', password: 'p', ociPlainHttp: true };
    expect(() =>
      dependencyBuildFlags([repo('oci://a.example.com/c', plain), repo('oci://b.example.com/c', null)], what),
    ).toThrow(/disagree on --plain-http/);
  });
});
