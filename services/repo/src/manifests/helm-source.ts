// Helm charts (when a helm binary is configured): `helm template` of the chart directory with
// value files from the same repository. Helm's cache/config/data homes point at scratch space so
// no user configuration or repository credentials are picked up.
import { access } from 'node:fs/promises';
import { ValidationError } from '@capstan/service';
import path from 'node:path';
import { parseManifests, type KubeObject } from './manifest-documents.js';
import { PathEscapeError } from './manifest-errors.js';
import { isInside } from './repo-path.js';
import { runRenderTool } from './render-tool.js';

// Both end up on helm's command line: validated so neither can be read as an option.
const RELEASE_NAME = /^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export interface HelmOptions {
  releaseName: string;
  namespace: string;
  valueFiles: string[];
}

export async function isHelmChart(appDir: string): Promise<boolean> {
  return access(path.join(appDir, 'Chart.yaml')).then(
    () => true,
    () => false,
  );
}

export async function renderHelm(opts: {
  helm: string;
  root: string;
  appDir: string;
  options: HelmOptions;
  scratchHome: string;
  timeoutMs: number;
  what: string;
}): Promise<KubeObject[]> {
  const violations = [];
  if (opts.options.releaseName && !RELEASE_NAME.test(opts.options.releaseName)) {
    violations.push({
      field: 'source.helm.releaseName',
      description: 'must be a DNS label of at most 53 characters',
    });
  }
  if (opts.options.namespace && !NAMESPACE.test(opts.options.namespace)) {
    violations.push({ field: 'source.helm.namespace', description: 'must be a Kubernetes namespace name' });
  }
  if (violations.length > 0) throw new ValidationError(violations);
  const args = ['template', opts.options.releaseName || 'release', '.', '--include-crds'];
  if (opts.options.namespace) args.push('--namespace', opts.options.namespace);
  for (const file of opts.options.valueFiles) {
    const resolved = path.resolve(opts.appDir, file);
    if (!isInside(opts.root, resolved))
      throw new PathEscapeError(`${opts.what}: value file ${file} escapes the repository`);
    args.push('--values', resolved);
  }
  const out = await runRenderTool({
    command: opts.helm,
    args,
    cwd: opts.appDir,
    env: {
      HOME: opts.scratchHome,
      HELM_CACHE_HOME: path.join(opts.scratchHome, 'helm-cache'),
      HELM_CONFIG_HOME: path.join(opts.scratchHome, 'helm-config'),
      HELM_DATA_HOME: path.join(opts.scratchHome, 'helm-data'),
    },
    timeoutMs: opts.timeoutMs,
    what: opts.what,
  });
  return parseManifests(out, `${opts.what} (helm output)`, 'yaml');
}
