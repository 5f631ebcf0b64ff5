// Argo CD v3.2's generator orchestration (generator_spec_processor.go Transform, matrix.go, merge.go,
// list.go, cluster.go, git.go) over injected providers. The parameter rules that depend on Go's
// formatting and libraries run in the Go module (bridge); the selection and the I/O happen here.
import type { GeneratorSpec, Template } from '../manifest/schema.js';
import type { Bridge, Params } from './bridge.js';
import { AppSetError } from './errors.js';
import type { ClusterInfo, Providers } from './providers.js';
import { isEmptySelector, selectorMatches } from './selector.js';

export const IN_CLUSTER_SERVER = 'https://kubernetes.default.svc';

export interface TransformResult {
  params: Params[];
  template: Template;
}

export interface GeneratorContext {
  readonly bridge: Bridge;
  readonly providers: Providers;
  readonly goTemplate: boolean;
  /** Field path of the generator being run, for provider-missing issues. */
  readonly path: string;
  /** Repositories and cluster reads, recorded for the caller (RBAC, reconcile triggers). */
  readonly reads: { repos: Map<string, { repoURL: string; revision: string }>; clusters: boolean };
}

/** Argo's Transform: one generator's parameter sets (post-selector applied) and merged template. */
export async function transform(
  ctx: GeneratorContext,
  requested: GeneratorSpec,
  baseTemplate: Template,
  genParams: Params,
): Promise<TransformResult> {
  const kind = generatorKind(requested);
  const template = fillTemplate(requested[kind]?.template ?? {}, baseTemplate);
  let gen = requested;
  if (Object.keys(genParams).length > 0) {
    try {
      gen = await ctx.bridge.value<GeneratorSpec>('replaceTree', { tree: requested, params: genParams });
    } catch (err) {
      throw new Error(`failed to replace parameters in generator: ${(err as Error).message}`, { cause: err });
    }
  }
  const params = await generateParams(ctx, kind, gen);
  if (!requested.selector) return { params, template };
  const flat = await ctx.bridge.items<Record<string, string>>('flatten', { batch: params });
  const kept: Params[] = [];
  flat.forEach((f, i) => {
    if ('error' in f) throw new Error(f.error);
    if (selectorMatches(requested.selector, f.value)) kept.push(params[i] as Params);
  });
  return { params: kept, template };
}

type Kind = 'list' | 'clusters' | 'git' | 'matrix' | 'merge';

function generatorKind(g: GeneratorSpec): Kind {
  for (const k of ['list', 'clusters', 'git', 'matrix', 'merge'] as const) if (g[k] !== undefined) return k;
  throw new Error('generator is empty');
}

async function generateParams(ctx: GeneratorContext, kind: Kind, g: GeneratorSpec): Promise<Params[]> {
  switch (kind) {
    case 'list': {
      const list = g.list!;
      return (
        (await ctx.bridge.value<(Params | null)[] | null>('list', {
          elements: list.elements ?? [],
          elementsYaml: list.elementsYaml ?? '',
        })) ?? []
      ).map((p) => p ?? {});
    }
    case 'clusters':
      return clusterParams(ctx, g);
    case 'git':
      return gitParams(ctx, g);
    case 'matrix':
      return matrixParams(ctx, g);
    case 'merge':
      return mergeParams(ctx, g);
  }
}

async function clusterParams(ctx: GeneratorContext, g: GeneratorSpec): Promise<Params[]> {
  const spec = g.clusters!;
  if (!ctx.providers.clusters)
    throw new AppSetError('ProviderMissing', [
      {
        path: ctx.path,
        message: 'the clusters generator needs the cluster registry (not available offline)',
      },
    ]);
  ctx.reads.clusters = true;
  const registered = await ctx.providers.clusters.listClusters();
  const ignoreLocal = !isEmptySelector(spec.selector);
  const entries: (ClusterInfo & { local?: boolean })[] = [];
  // Argo lists the registered clusters plus an `in-cluster` entry when none has its server; the
  // in-cluster entry only counts when the selector is empty, and comes first.
  if (!ignoreLocal && !registered.some((c) => c.server === IN_CLUSTER_SERVER))
    entries.push({ name: 'in-cluster', server: IN_CLUSTER_SERVER, local: true });
  const seen = new Set<string>();
  for (const c of registered) {
    if (seen.has(c.name)) continue;
    seen.add(c.name);
    if (selectorMatches(spec.selector, c.labels ?? {})) entries.push(c);
  }
  return (
    (await ctx.bridge.value<Params[] | null>('clusters', {
      clusters: entries.map((c) => ({
        name: c.name,
        server: c.server,
        project: c.project ?? '',
        labels: c.labels ?? {},
        annotations: c.annotations ?? {},
        local: c.local === true,
      })),
      values: spec.values ?? {},
      flatList: spec.flatList === true,
    })) ?? []
  );
}

async function gitParams(ctx: GeneratorContext, g: GeneratorSpec): Promise<Params[]> {
  const spec = g.git!;
  if (!ctx.providers.git)
    throw new AppSetError('ProviderMissing', [
      { path: ctx.path, message: 'the git generator needs the repo service (not available offline)' },
    ]);
  const revision = spec.revision || 'HEAD';
  ctx.reads.repos.set(`${spec.repoURL}@${revision}`, { repoURL: spec.repoURL, revision });
  const common = { values: spec.values ?? {}, pathParamPrefix: spec.pathParamPrefix ?? '' };
  if (spec.directories?.length) {
    const listed = await ctx.providers.git.listDirectories({
      repoURL: spec.repoURL,
      revision,
      patterns: spec.directories.map((d) => ({ pattern: d.path, exclude: d.exclude === true })),
    });
    const paths = [...listed.paths].sort();
    try {
      return (
        (await ctx.bridge.value<Params[] | null>('gitDirectories', {
          paths,
          directories: spec.directories.map((d) => ({ path: d.path, exclude: d.exclude === true })),
          ...common,
        })) ?? []
      );
    } catch (err) {
      throw new Error(`error generating params from git: ${(err as Error).message}`, { cause: err });
    }
  }
  const listed = await ctx.providers.git.listFiles({
    repoURL: spec.repoURL,
    revision,
    patterns: (spec.files ?? []).map((f) => ({ pattern: f.path, exclude: f.exclude === true })),
  });
  const files = [...listed.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  try {
    return (await ctx.bridge.value<Params[] | null>('gitFiles', { files, ...common })) ?? [];
  } catch (err) {
    throw new Error(`error generating params from git: ${(err as Error).message}`, { cause: err });
  }
}

/** Runs a matrix or merge child (Argo's getParams): a Transform with an empty template. */
async function childParams(
  ctx: GeneratorContext,
  child: GeneratorSpec,
  params: Params,
  path: string,
): Promise<Params[]> {
  try {
    const t = await transform({ ...ctx, path }, child, {} as Template, params);
    return t.params;
  } catch (err) {
    if (err instanceof AppSetError) throw err;
    throw new Error(`child generator returned an error on parameter generation: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

async function matrixParams(ctx: GeneratorContext, g: GeneratorSpec): Promise<Params[]> {
  const [first, second] = g.matrix!.generators as [GeneratorSpec, GeneratorSpec];
  const base = `${ctx.path}.matrix.generators`;
  let g0: Params[];
  try {
    g0 = await childParams(ctx, first, {}, `${base}[0]`);
  } catch (err) {
    if (err instanceof AppSetError) throw err;
    throw new Error(
      `error failed to get params for first generator in matrix generator: ${(err as Error).message}`,
    );
  }
  const pairs: [Params, Params][] = [];
  for (const a of g0) {
    let g1: Params[];
    try {
      g1 = await childParams(ctx, second, a, `${base}[1]`);
    } catch (err) {
      if (err instanceof AppSetError) throw err;
      throw new Error(
        `failed to get params for second generator in the matrix generator: ${(err as Error).message}`,
      );
    }
    for (const b of g1) pairs.push([a, b]);
  }
  if (pairs.length === 0) return [];
  return (await ctx.bridge.value<Params[] | null>('matrix', { pairs })) ?? [];
}

async function mergeParams(ctx: GeneratorContext, g: GeneratorSpec): Promise<Params[]> {
  const merge = g.merge!;
  const sets: Params[][] = [];
  for (const [i, child] of merge.generators.entries()) {
    try {
      sets.push(await childParams(ctx, child, {}, `${ctx.path}.merge.generators[${i}]`));
    } catch (err) {
      if (err instanceof AppSetError) throw err;
      throw new Error(
        `error getting param sets from generators: error getting params from generator ${i + 1} of ${merge.generators.length}: ${(err as Error).message}`,
      );
    }
  }
  return (await ctx.bridge.value<Params[] | null>('merge', { sets, mergeKeys: merge.mergeKeys })) ?? [];
}

/**
 * mergo.Merge(generatorTemplate, setTemplate) restated over JSON: the generator's own template
 * wins; a field it leaves empty (absent, "", false, 0, [] or {}) is taken from the set's template;
 * objects merge field by field.
 */
export function fillTemplate(dest: unknown, src: unknown): Template {
  return fill(dest, src) as Template;
}

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === false || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v as object).length === 0;
  return false;
}

function fill(dest: unknown, src: unknown): unknown {
  if (isEmpty(dest)) return structuredClone(src);
  if (isPlainObject(dest) && isPlainObject(src)) {
    const out: Record<string, unknown> = { ...dest };
    for (const [k, v] of Object.entries(src)) out[k] = fill(out[k], v);
    return out;
  }
  return dest;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
