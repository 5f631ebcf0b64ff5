// `helm dependency build` for a chart in git whose Chart.yaml declares dependencies that are not
// vendored in its charts/ directory, as Argo CD runs it. The repositories they name (https://,
// oci://) are reached through the egress proxy with the credential selected for the Application's
// project for each one (the caller's lookup: one selection and audit row per repository); a
// `file://` dependency must stay inside the repository. The build runs on a scratch copy: a tree
// of hard links of the repository whose chart directory alone is a real copy, so the shared
// checkout is never written.
import { cp, mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { chartRepoKind, readYamlDocuments } from '@capstan/policy';
import type { CheckoutCredential } from '../checkouts/checkout-store.js';
import { linkTree } from '../manifests/kustomize-source.js';
import { ManifestRenderError, PathEscapeError } from '../manifests/manifest-errors.js';
import { isInside } from '../manifests/repo-path.js';
import {
  helmHome,
  runHelm,
  writeHelmCredentials,
  type ChartRepository,
  type HelmRunner,
} from './helm-pull.js';

export interface Dependency {
  name: string;
  repository: string;
}

/** The credential selected for a dependency's repository (audited by the caller). */
export type DependencyCredentials = (url: string) => Promise<CheckoutCredential | null>;

/** The dependencies of a chart directory's Chart.yaml that have a repository. */
export async function declaredDependencies(chartDir: string): Promise<Dependency[]> {
  const text = await readFile(path.join(chartDir, 'Chart.yaml'), 'utf8').catch(() => '');
  const doc = readYamlDocuments(text, 'Chart.yaml')[0];
  const deps = (doc?.value as { dependencies?: unknown } | undefined)?.dependencies;
  if (!Array.isArray(deps)) return [];
  return deps
    .filter((d): d is { name: string; repository: string } => {
      const dep = d as { name?: unknown; repository?: unknown };
      return typeof dep.name === 'string' && typeof dep.repository === 'string' && dep.repository !== '';
    })
    .map((d) => ({ name: d.name, repository: d.repository }));
}

/** Whether charts/ lacks a dependency (neither `<name>/` nor `<name>-<version>.tgz`). */
async function missing(chartDir: string, deps: readonly Dependency[]): Promise<boolean> {
  const vendored = await readdir(path.join(chartDir, 'charts')).catch(() => [] as string[]);
  return deps.some(
    (d) => !vendored.some((f) => f === d.name || (f.startsWith(`${d.name}-`) && f.endsWith('.tgz'))),
  );
}

/** Refuses a `file://` dependency outside the repository (helm would read any path). */
async function checkLocal(root: string, chartDir: string, dep: Dependency, what: string): Promise<void> {
  const target = path.resolve(chartDir, dep.repository.slice('file://'.length));
  const real = await realpath(target).catch(() => target);
  if (!isInside(root, real))
    throw new PathEscapeError(
      `${what}: dependency ${dep.name} (${dep.repository}) resolved to outside repository root`,
    );
}

const isOci = (r: ChartRepository) => /^oci:\/\//i.test(r.url);

/**
 * `helm dependency build` takes one `--plain-http` for every OCI registry of the run and one
 * `--insecure-skip-tls-verify` for every download (a Helm repository's own entry in
 * repositories.yaml says it too, per repository): a flag is passed only when every repository it
 * would reach asks for it through its credential (Argo CD's insecureOCIForceHttp, insecure).
 * Repositories that disagree are refused, so that one credential's setting never weakens another
 * repository's connection.
 */
export function dependencyBuildFlags(repos: readonly ChartRepository[], what: string): string[] {
  const rules: [string, readonly ChartRepository[], (r: ChartRepository) => boolean][] = [
    ['--plain-http', repos.filter(isOci), (r) => Boolean(r.auth?.ociPlainHttp)],
    ['--insecure-skip-tls-verify', repos, (r) => Boolean(r.auth?.insecure)],
  ];
  const flags: string[] = [];
  for (const [flag, reached, asks] of rules) {
    const asking = reached.filter(asks);
    if (asking.length === 0) continue;
    const others = reached.filter((r) => !asks(r));
    if (others.length > 0)
      throw new ManifestRenderError(
        `${what}: dependency repositories disagree on ${flag} (${asking.map((r) => r.url).join(', ')} ` +
          `ask for it, ${others.map((r) => r.url).join(', ')} do not); helm dependency build takes ` +
          'one setting for all of them: give them the same credential settings, or vendor the charts',
      );
    flags.push(flag);
  }
  return flags;
}

/**
 * Builds the missing dependencies into a scratch copy; returns the copy's root and chart directory
 * and its removal, or null when nothing needs building.
 */
export async function withDependencies(opts: {
  runner: HelmRunner;
  root: string;
  appDir: string;
  credentials: DependencyCredentials;
  passCredentials: boolean;
  what: string;
}): Promise<{ root: string; appDir: string; remove(): Promise<void> } | null> {
  const deps = await declaredDependencies(opts.appDir);
  if (deps.length === 0 || !(await missing(opts.appDir, deps))) return null;
  const repos: ChartRepository[] = [];
  for (const dep of deps) {
    if (dep.repository.startsWith('file://')) {
      await checkLocal(opts.root, opts.appDir, dep, opts.what);
      continue;
    }
    // `@name` / `alias:` refer to repositories of a user's helm configuration: there is none here.
    if (!chartRepoKind(dep.repository) || repos.some((r) => r.url === dep.repository)) continue;
    repos.push({
      url: dep.repository,
      auth: (await opts.credentials(dep.repository))?.auth ?? null,
      passCredentials: opts.passCredentials,
    });
  }
  const flags = dependencyBuildFlags(repos, opts.what);
  const scratch = await mkdtemp(path.join(opts.runner.scratchDir, 'helm-deps-'));
  const home = await helmHome(opts.runner.scratchDir);
  try {
    await linkTree(opts.root, scratch);
    const appPath = path.relative(opts.root, opts.appDir);
    const appDir = path.join(scratch, appPath);
    // The chart directory is written by helm (charts/, Chart.lock): a real copy, not links.
    await rm(appDir, { recursive: true, force: true });
    await cp(opts.appDir, appDir, { recursive: true, verbatimSymlinks: true });
    await writeHelmCredentials(home, repos);
    await runHelm(opts.runner, home, ['dependency', 'build', '.', ...flags], {
      cwd: appDir,
      what: `${opts.what} (helm dependency build)`,
      hosts: repos.map((r) => r.url),
    });
    return { root: scratch, appDir, remove: () => rm(scratch, { recursive: true, force: true }) };
  } catch (err) {
    await rm(scratch, { recursive: true, force: true });
    throw err;
  } finally {
    await rm(home.dir, { recursive: true, force: true });
  }
}
