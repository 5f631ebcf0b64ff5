// Pulls a chart with helm's own code (the helm binary): `helm repo update` + `helm pull` from a Helm
// repository, `helm pull oci://…` from an OCI registry. Each run has scratch HELM_CONFIG_HOME,
// HELM_CACHE_HOME, HELM_DATA_HOME, HELM_REPOSITORY_CONFIG and HELM_REGISTRY_CONFIG in a fresh 0700
// directory removed afterwards; credentials reach helm only through 0600 files there
// (repositories.yaml entries, the registry's config.json), never argv or environment. Every
// connection helm opens goes through a per-run egress proxy (egress-proxy.ts), bounded in bytes;
// the run is bounded in time. helm's own loader bounds the expanded chart (100 MiB, 5 MiB a file).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { GitAuth } from '../checkouts/git-process.js';
import { checkedAddresses, type EgressPolicy } from '../checkouts/egress.js';
import { runRenderTool } from '../manifests/render-tool.js';
import { ManifestRenderError } from '../manifests/manifest-errors.js';
import { ChartTooLargeError, startEgressProxy } from './egress-proxy.js';

export interface HelmRunner {
  helm: string;
  egress: EgressPolicy;
  scratchDir: string;
  timeoutMs: number;
  /** Bound of the bytes one helm run may download. */
  maxBytes: number;
}

/** A Helm repository (http/https) or OCI registry for one helm run, with its credential. */
export interface ChartRepository {
  url: string;
  auth: GitAuth | null;
  /** Argo CD's passCredentials: send the repository's credentials to other hosts it links to. */
  passCredentials?: boolean;
}

export interface HelmHome {
  dir: string;
  env: Record<string, string>;
}

/** A scratch helm home: every helm path inside it (no user configuration is read). */
export async function helmHome(scratchDir: string): Promise<HelmHome> {
  await mkdir(scratchDir, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(path.join(scratchDir, 'helm-home-'));
  return {
    dir,
    env: {
      HOME: dir,
      HELM_CACHE_HOME: path.join(dir, 'cache'),
      HELM_CONFIG_HOME: path.join(dir, 'config'),
      HELM_DATA_HOME: path.join(dir, 'data'),
      HELM_REPOSITORY_CONFIG: path.join(dir, 'repositories.yaml'),
      HELM_REPOSITORY_CACHE: path.join(dir, 'cache', 'repository'),
      HELM_REGISTRY_CONFIG: path.join(dir, 'registry.json'),
      DOCKER_CONFIG: path.join(dir, 'docker'),
    },
  };
}

const hostOf = (url: string) => new URL(url.replace(/^oci:\/\//i, 'https://')).host;

/**
 * Writes the credentials helm reads: repositories.yaml (JSON is YAML) for Helm repositories, named
 * `capstan-<i>`, and the registry config for OCI registries. Returns the repository names by URL.
 */
export async function writeHelmCredentials(
  home: HelmHome,
  repos: readonly ChartRepository[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const entries: Record<string, unknown>[] = [];
  const auths: Record<string, { auth: string }> = {};
  repos.forEach((r, i) => {
    if (/^oci:\/\//i.test(r.url)) {
      if (r.auth?.username && r.auth.password)
        auths[hostOf(r.url)] = {
          auth: Buffer.from(`${r.auth.username}:${r.auth.password}`).toString('base64'),
        };
      return;
    }
    const name = `capstan-${i}`;
    names.set(r.url, name);
    entries.push({
      name,
      url: r.url,
      username: r.auth?.password ? r.auth.username : '',
      password: r.auth?.password ?? '',
      insecure_skip_tls_verify: Boolean(r.auth?.insecure),
      pass_credentials_all: Boolean(r.passCredentials),
    });
  });
  const files: [string, unknown][] = [
    [home.env.HELM_REPOSITORY_CONFIG as string, { apiVersion: '', repositories: entries }],
    [home.env.HELM_REGISTRY_CONFIG as string, { auths }],
  ];
  for (const [file, content] of files) await writeFile(file, JSON.stringify(content), { mode: 0o600 });
  return names;
}

/** One helm run through its own egress proxy; the proxy's refusal wins over helm's message. */
export async function runHelm(
  runner: HelmRunner,
  home: HelmHome,
  args: string[],
  opts: {
    cwd: string;
    what: string;
    hosts: readonly string[];
    causeOnStdout?: (stdout: string) => string | undefined;
  },
): Promise<string> {
  // The hosts named up front are checked before helm starts (a clear error, nothing spawned).
  for (const url of opts.hosts) {
    await checkedAddresses(
      runner.egress,
      new URL(url.replace(/^oci:\/\//i, 'https://')).hostname.replace(/^\[(.*)\]$/, '$1'),
      opts.what,
    );
  }
  const proxy = await startEgressProxy({ policy: runner.egress, maxBytes: runner.maxBytes, what: opts.what });
  try {
    return await runRenderTool({
      command: runner.helm,
      args,
      cwd: opts.cwd,
      env: {
        ...home.env,
        HTTPS_PROXY: proxy.url,
        HTTP_PROXY: proxy.url,
        https_proxy: proxy.url,
        http_proxy: proxy.url,
        NO_PROXY: '',
        no_proxy: '',
      },
      timeoutMs: runner.timeoutMs,
      what: opts.what,
      ...(opts.causeOnStdout ? { causeOnStdout: opts.causeOnStdout } : {}),
    }).catch((err: unknown) => {
      const refusal = proxy.refusal();
      if (refusal instanceof ChartTooLargeError) throw new ManifestRenderError(refusal.message);
      if (refusal) throw refusal;
      // helm's message may quote a scratch path; the tenant needs neither it nor the proxy URL.
      if (err instanceof ManifestRenderError)
        throw new ManifestRenderError(
          err.message.split(home.dir).join('<scratch>').split(proxy.url).join('<proxy>'),
        );
      throw err;
    });
  } finally {
    await proxy.close();
  }
}

/** The pulled chart's version, from its Chart.yaml. */
async function chartVersionOf(chartDir: string, what: string): Promise<string> {
  const text = await readFile(path.join(chartDir, 'Chart.yaml'), 'utf8').catch(() => '');
  const version = /^version:\s*["']?([^"'\s#]+)/m.exec(text)?.[1];
  if (!version) throw new ManifestRenderError(`${what}: the pulled chart has no version in Chart.yaml`);
  return version;
}

/**
 * `helm repo update` says why a repository failed on stdout ("...Unable to get an update from the
 * "capstan-0" chart repository (https://…): Get "…": tls: failed to verify certificate: …") and only
 * "Failed to update the following repositories" on stderr: the cause, without helm's own repository name.
 */
function repoUpdateCause(stdout: string): string | undefined {
  const line = /Unable to get an update from the "[^"]*" chart repository \(([^)]*)\):\s*(.*)/.exec(stdout);
  return line ? `${line[1]}: ${line[2]!.trim()}` : undefined;
}

/**
 * Pulls `chart` at `version` (a version or constraint) from `repo` into `dest/<chart>/`, returning
 * the exact version pulled.
 */
export async function pullChart(
  runner: HelmRunner,
  repo: ChartRepository,
  chart: string,
  version: string,
  dest: string,
  what: string,
): Promise<string> {
  const home = await helmHome(runner.scratchDir);
  try {
    const names = await writeHelmCredentials(home, [repo]);
    const common = ['--version', version, '--destination', dest, '--untar'];
    if (repo.auth?.insecure) common.push('--insecure-skip-tls-verify');
    const run = (args: string[]) =>
      runHelm(runner, home, args, { cwd: home.dir, what, hosts: [repo.url], causeOnStdout: repoUpdateCause });
    if (/^oci:\/\//i.test(repo.url)) {
      const ref = `${repo.url.replace(/\/+$/, '')}/${chart}`;
      await run(['pull', ref, ...common, ...(repo.auth?.ociPlainHttp ? ['--plain-http'] : [])]);
    } else {
      const name = names.get(repo.url) as string;
      await run(['repo', 'update', name, '--fail-on-repo-update-fail']);
      await run(['pull', `${name}/${chart}`, ...common]);
    }
    return await chartVersionOf(path.join(dest, chart), what);
  } finally {
    await rm(home.dir, { recursive: true, force: true });
  }
}
