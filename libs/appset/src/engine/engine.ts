// The ApplicationSet engine: validates a set, runs its generators through the injected providers,
// renders one Application per parameter set in the Go template module, and validates every
// generated Application exactly as a directly created one (@capstan/policy). All or nothing: any
// failure throws AppSetError with field paths and nothing is returned.
import {
  ARGO_API_VERSION,
  DEFAULT_CONTROL_NAMESPACE,
  dnsSubdomainProblem,
  issuesFromZod,
  validateApplication,
  type Application,
  type PolicyIssue,
} from '@capstan/policy';
import { ApplicationSetSchema, type ApplicationSet } from '../manifest/schema.js';
import {
  GoTemplateModule,
  TemplateTimeoutError,
  type GoTemplateModuleOptions,
} from '../gotemplate/runtime.js';
import { Bridge, GoSideError, type Params } from './bridge.js';
import { AppSetError } from './errors.js';
import { transform, type GeneratorContext } from './generators.js';
import type { Providers } from './providers.js';

/** Bounds on one generation (documented in docs/applicationsets.md). */
export interface Limits {
  /** More generated Applications than this is an error. */
  readonly maxApplications: number;
  /** Bound on any single rendered string (a template field, a key, a templatePatch). */
  readonly maxOutputBytes: number;
  /** Bound on the JSON size of all generated Applications together. */
  readonly maxTotalOutputBytes: number;
  /** Wall-clock budget for the whole generation, template module calls included. */
  readonly timeoutMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxApplications: 10_000,
  maxOutputBytes: 256 * 1024,
  maxTotalOutputBytes: 64 * 1024 * 1024,
  timeoutMs: 10_000,
};

export interface GenerateRequest {
  /** The ApplicationSet object (already parsed from YAML/JSON); validated here. */
  readonly applicationSet: unknown;
  readonly providers?: Providers;
  readonly limits?: Partial<Limits>;
}

export interface GenerateResult {
  /** The validated set (defaults applied). */
  readonly applicationSet: ApplicationSet;
  /** Generated Applications, sorted by name, each valid as a directly created Application. */
  readonly applications: Application[];
  /** Every repository (and revision) a git generator read, and whether the cluster registry was read. */
  readonly reads: { readonly repos: { repoURL: string; revision: string }[]; readonly clusters: boolean };
}

export interface EngineOptions extends GoTemplateModuleOptions {
  readonly limits?: Partial<Limits>;
}

export class AppSetEngine {
  private constructor(
    private readonly module: GoTemplateModule,
    private readonly limits: Limits,
  ) {}

  /** Loads (compiles) the Go template module once and starts its worker. */
  static async load(opts: EngineOptions = {}): Promise<AppSetEngine> {
    const module = await GoTemplateModule.load(opts);
    await module.warm();
    return new AppSetEngine(module, { ...DEFAULT_LIMITS, ...opts.limits });
  }

  async close(): Promise<void> {
    await this.module.close();
  }

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const appset = parseApplicationSet(req.applicationSet);
    const limits = { ...this.limits, ...req.limits };
    const deadline = Date.now() + limits.timeoutMs;
    const remaining = () => deadline - Date.now();
    const { spec } = appset;
    const bridge = new Bridge(
      this.module,
      { goTemplate: spec.goTemplate, options: spec.goTemplateOptions, maxBytes: limits.maxOutputBytes },
      remaining,
    );
    const reads: GeneratorContext['reads'] = { repos: new Map(), clusters: false };
    const rendered: { app: Record<string, unknown>; path: string }[] = [];
    try {
      const batches: { params: Params[]; template: unknown; path: string }[] = [];
      let count = 0;
      for (const [i, gen] of spec.generators.entries()) {
        const path = `spec.generators[${i}]`;
        const ctx: GeneratorContext = {
          bridge,
          providers: req.providers ?? {},
          goTemplate: spec.goTemplate,
          path,
          reads,
        };
        const t = await step(
          () => transform(ctx, gen, spec.template, {}),
          'ApplicationParamsGenerationError',
          path,
        );
        count += t.params.length;
        if (count > limits.maxApplications)
          throw new AppSetError('LimitExceeded', [
            {
              path: 'spec.generators',
              message: `the ApplicationSet generates more than ${limits.maxApplications} Applications (the limit)`,
            },
          ]);
        batches.push({ params: t.params, template: t.template, path });
        if (remaining() <= 0) throw timeout(limits);
      }
      let total = 0;
      for (const b of batches) {
        if (b.params.length === 0) continue;
        const items = await step(
          () =>
            bridge.items<Record<string, unknown>>('render', {
              tree: b.template,
              batch: b.params,
              preserve: spec.syncPolicy?.preserveResourcesOnDeletion === true,
              patch: spec.templatePatch ?? null,
            }),
          'RenderTemplateParamsError',
          'spec.template',
        );
        for (const item of items) {
          if ('error' in item)
            throw new AppSetError('RenderTemplateParamsError', [
              { path: 'spec.template', message: item.error },
            ]);
          total += JSON.stringify(item.value).length;
          if (total > limits.maxTotalOutputBytes)
            throw new AppSetError('LimitExceeded', [
              {
                path: 'spec.template',
                message: `the generated Applications exceed ${limits.maxTotalOutputBytes} bytes (the limit)`,
              },
            ]);
          rendered.push({ app: item.value, path: b.path });
        }
      }
    } catch (err) {
      if (err instanceof TemplateTimeoutError) throw timeout(limits, err);
      throw err;
    }
    const applications = toApplications(appset, rendered);
    return {
      applicationSet: appset,
      applications,
      reads: { repos: [...reads.repos.values()], clusters: reads.clusters },
    };
  }
}

function timeout(limits: Limits, cause?: unknown): AppSetError {
  return new AppSetError(
    'LimitExceeded',
    [
      {
        path: 'spec',
        message: `generating the ApplicationSet took longer than ${limits.timeoutMs} ms (the limit)`,
      },
    ],
    { cause },
  );
}

async function step<T>(fn: () => Promise<T>, reason: AppSetError['reason'], path: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppSetError || err instanceof TemplateTimeoutError) throw err;
    if (err instanceof GoSideError || err instanceof Error)
      throw new AppSetError(reason, [{ path, message: err.message }], { cause: err });
    throw err;
  }
}

/** Validates an ApplicationSet object; throws AppSetError('InvalidManifest') with field paths. */
export function parseApplicationSet(input: unknown): ApplicationSet {
  const parsed = ApplicationSetSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) throw new AppSetError('InvalidManifest', issuesFromZod(parsed.error));
  return parsed.data;
}

/**
 * Builds Argo's generated Application from each rendered template (namespace = the set's), then:
 * Kubernetes' name rules, Argo's duplicate-name error, and the Application checks of
 * @capstan/policy. Sorted by name.
 */
function toApplications(appset: ApplicationSet, rendered: { app: Record<string, unknown> }[]): Application[] {
  const namespace = appset.metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE;
  const issues: PolicyIssue[] = [];
  const seen = new Set<string>();
  const apps: Application[] = [];
  for (const { app } of rendered) {
    const meta = (app.metadata ?? {}) as Record<string, unknown>;
    const name = typeof meta.name === 'string' ? meta.name : '';
    const where = `applications[${JSON.stringify(name)}]`;
    if (name === '') {
      issues.push({ path: 'applications[""].metadata.name', message: 'Required value: name is required' });
      continue;
    }
    const nameProblem = dnsSubdomainProblem(name);
    if (nameProblem) {
      issues.push({
        path: `${where}.metadata.name`,
        message: `Invalid value: ${JSON.stringify(name)}: ${nameProblem}`,
      });
      continue;
    }
    if (seen.has(name)) {
      issues.push({
        path: `${where}.metadata.name`,
        message: `ApplicationSet ${appset.metadata.name} contains applications with duplicate name: ${name}`,
      });
      continue;
    }
    seen.add(name);
    if (typeof meta.namespace === 'string' && meta.namespace !== '' && meta.namespace !== namespace) {
      issues.push({
        path: `${where}.metadata.namespace`,
        message: `must be the ApplicationSet's namespace ${JSON.stringify(namespace)} (got ${JSON.stringify(meta.namespace)})`,
      });
      continue;
    }
    const candidate = {
      apiVersion: ARGO_API_VERSION,
      kind: 'Application',
      metadata: {
        name,
        namespace,
        ...(nonEmpty(meta.labels) ? { labels: meta.labels } : {}),
        ...(nonEmpty(meta.annotations) ? { annotations: meta.annotations } : {}),
        ...(Array.isArray(meta.finalizers) && meta.finalizers.length > 0
          ? { finalizers: meta.finalizers }
          : {}),
      },
      spec: app.spec ?? {},
    };
    const v = validateApplication(candidate);
    if (!v.ok) {
      for (const i of v.issues)
        issues.push({ path: i.path ? `${where}.${i.path}` : where, message: i.message });
      continue;
    }
    apps.push(v.value);
  }
  if (issues.length > 0) throw new AppSetError('ApplicationValidationError', issues);
  return apps.sort((a, b) =>
    a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
  );
}

function nonEmpty(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && Object.keys(v).length > 0;
}
