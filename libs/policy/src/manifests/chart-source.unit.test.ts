import { describe, expect, it } from 'vitest';
import { applicationSourceIssues as validate } from '../project/validate.js';
import { ApplicationSourceSchema } from './schemas.js';
import { normalizeRepoUrl, repoEndpoint, repoUrlProblem } from '../repository/repo-url.js';
import { chartRepoKind, chartRepoUrl, chartVersionConstraint, isExactChartVersion } from './chart-source.js';

const applicationSourceIssues = (source: Record<string, string>, at: string) =>
  validate(ApplicationSourceSchema.parse(source), at);

describe('chart sources (Argo CD spec.source.chart)', () => {
  it('accepts a Helm repository or an OCI registry, with or without the oci:// scheme', () => {
    expect(
      applicationSourceIssues(
        { repoURL: 'https://charts.example.com', chart: 'web', targetRevision: '^1.2' },
        's',
      ),
    ).toEqual([]);
    expect(
      applicationSourceIssues(
        { repoURL: 'oci://registry.example.com/charts', chart: 'web', targetRevision: '1.2.3' },
        's',
      ),
    ).toEqual([]);
    expect(
      applicationSourceIssues(
        { repoURL: 'registry-1.docker.io/bitnamicharts', chart: 'nginx', targetRevision: '15.9.0' },
        's',
      ),
    ).toEqual([]);
    expect(chartRepoUrl('registry-1.docker.io/bitnamicharts')).toBe(
      'oci://registry-1.docker.io/bitnamicharts',
    );
    expect(chartRepoKind('registry.example.com/charts')).toBe('oci');
    expect(chartRepoKind('https://charts.example.com')).toBe('helm');
  });

  it('refuses what helm could misread, with the field path', () => {
    expect(
      applicationSourceIssues(
        { repoURL: 'https://c.example.com', chart: '--set=x', targetRevision: '1' },
        's',
      ),
    ).toEqual([expect.objectContaining({ path: 's.chart' })]);
    expect(
      applicationSourceIssues(
        { repoURL: 'https://c.example.com', chart: 'web', targetRevision: '--devel' },
        's',
      ),
    ).toEqual([expect.objectContaining({ path: 's.targetRevision' })]);
    expect(applicationSourceIssues({ repoURL: 'git@github.com:org/charts.git', chart: 'web' }, 's')).toEqual([
      expect.objectContaining({ path: 's.repoURL', message: expect.stringMatching(/Helm repository/) }),
    ]);
    expect(
      applicationSourceIssues({ repoURL: 'oci://user:pw@registry.example.com/charts', chart: 'web' }, 's')[0]
        ?.message,
    ).toMatch(/must not carry a username or password/);
  });

  it('keeps oci:// away from git: a source without chart may not name a registry', () => {
    expect(repoUrlProblem('oci://registry.example.com/charts')).toMatch(/oci:\/\/ URL here/);
    expect(repoUrlProblem('oci://registry.example.com/charts', { allowOci: true })).toBeUndefined();
    expect(repoUrlProblem('oci://-oProxy/charts', { allowOci: true })).toMatch(/host beginning/);
  });

  it('compares oci:// and scheme-less registry URLs as one, and connects over HTTPS by default', () => {
    expect(normalizeRepoUrl('oci://Registry.example.com/charts/')).toBe(
      normalizeRepoUrl('registry.example.com/charts'),
    );
    expect(repoEndpoint('oci://registry.example.com:5000/charts')).toEqual({
      transport: 'https',
      host: 'registry.example.com',
      port: 5000,
    });
  });

  it('reads an empty or HEAD version as the newest, and tells exact versions from constraints', () => {
    expect(chartVersionConstraint('')).toBe('*');
    expect(chartVersionConstraint('HEAD')).toBe('*');
    expect(isExactChartVersion('1.2.3')).toBe(true);
    expect(isExactChartVersion('v1.2.3-rc.1')).toBe(true);
    expect(isExactChartVersion('^1.2')).toBe(false);
    expect(isExactChartVersion('>=1.0.0 <2.0.0')).toBe(false);
  });
});
