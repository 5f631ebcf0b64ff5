// Argo CD's Helm chart sources: `spec.source.chart` names a chart of a Helm repository (`repoURL`
// https:// or http://) or of an OCI registry (`repoURL` oci://host/path), and `targetRevision` is
// the chart's version or a semantic-version constraint (`1.2.3`, `^1.2`, `>=1.0.0 <2.0.0`, `*`), as
// Helm reads `--version`. One set of rules for the api (write time) and the repo service (each
// render request). Every value reaches helm's command line, so none may read as an option.
import type { PolicyIssue } from '../issues.js';
import { isSshUrl } from '../repository/repo-url.js';

/** Helm chart names: letters, digits, `.`, `_` and `-`, not beginning with `-` (nor a path). */
const CHART_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,252}$/;
/** A version or Masterminds/semver constraint, as helm --version takes it (no leading `-`). */
const CHART_VERSION = /^[0-9A-Za-z.*xX^~<>=!|, +_-]{0,256}$/;

export type ChartRepoKind = 'helm' | 'oci';

/**
 * The URL helm is given for a chart source's repoURL: Argo CD writes OCI registries without a
 * scheme (`registry-1.docker.io/bitnamicharts`, with enableOCI on the repository), which is
 * `oci://registry-1.docker.io/bitnamicharts`; every other URL is kept.
 */
export function chartRepoUrl(repoURL: string): string {
  const url = repoURL.trim();
  if (url === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(url) || isSshUrl(url)) return url;
  return `oci://${url}`;
}

/** Which kind of chart repository a URL names, or undefined when it cannot hold charts. */
export function chartRepoKind(repoURL: string): ChartRepoKind | undefined {
  const url = chartRepoUrl(repoURL);
  if (/^oci:\/\//i.test(url)) return 'oci';
  if (/^https?:\/\//i.test(url)) return 'helm';
  return undefined;
}

/** Argo CD reads an empty or `*` chart version as the newest one. */
export function chartVersionConstraint(targetRevision: string | undefined): string {
  const v = (targetRevision ?? '').trim();
  return v === '' || v === 'HEAD' ? '*' : v;
}

/** Whether a chart version names one version exactly (so a pulled chart can be reused as is). */
export function isExactChartVersion(version: string): boolean {
  return /^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(version);
}

/** Problems of a chart source's chart, repository kind and version (the URL itself: repoUrlProblem). */
export function chartSourceIssues(
  source: { repoURL: string; chart?: string; targetRevision?: string },
  at: string,
): PolicyIssue[] {
  if (source.chart === undefined) return [];
  const issues: PolicyIssue[] = [];
  if (!CHART_NAME.test(source.chart))
    issues.push({
      path: `${at}.chart`,
      message: 'must be a chart name (letters, digits, ".", "_" and "-"; at most 253 characters)',
    });
  if (!chartRepoKind(source.repoURL))
    issues.push({
      path: `${at}.repoURL`,
      message: 'must be a Helm repository (https://…) or an OCI registry (oci://…) when chart is set',
    });
  const version = chartVersionConstraint(source.targetRevision);
  if (!CHART_VERSION.test(version) || version.startsWith('-'))
    issues.push({
      path: `${at}.targetRevision`,
      message:
        'must be a chart version or a semantic-version constraint such as 1.2.3, ^1.2 or >=1.0.0 <2.0.0',
    });
  return issues;
}
