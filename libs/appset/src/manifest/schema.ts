// Argo CD's `argoproj.io/v1alpha1` ApplicationSet, as Argo CD v3.2 defines it, for the generators
// Capstan runs. Generators are strict (an unknown or misspelt generator key is an error naming its
// path, not a generator that silently produces nothing); templates are loose, because a generated
// Application is validated after rendering with exactly the checks of a directly created one.
import { z } from 'zod';
import { ARGO_API_VERSION } from '@capstan/policy';

function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => (v === null ? undefined : v) as z.output<T> | undefined);
}

/** Argo's messages, which users script against. */
export const MATRIX_TOO_MANY = 'found more than two generators, Matrix support only two';
export const MATRIX_TOO_FEW = 'found less than two generators, Matrix support only two';
export const MERGE_TOO_FEW = 'found less than two generators, Merge requires two or more';
export const MERGE_NO_KEYS = 'no merge keys were specified, Merge requires at least one';

const stringMap = z.record(z.string(), z.string());

export const LabelSelectorSchema = z.strictObject({
  matchLabels: optional(stringMap),
  matchExpressions: optional(
    z.array(
      z.strictObject({
        key: z.string().min(1, 'must not be empty'),
        operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
        values: optional(z.array(z.string())),
      }),
    ),
  ),
});

const TemplateMetaSchema = z.looseObject({
  name: optional(z.string()),
  namespace: optional(z.string()),
  labels: optional(stringMap),
  annotations: optional(stringMap),
  finalizers: optional(z.array(z.string())),
});

/** An Application template: metadata and an Application spec (checked after rendering). */
export const TemplateSchema = z.looseObject({
  metadata: optional(TemplateMetaSchema),
  spec: optional(z.looseObject({})),
});

const ListSchema = z.strictObject({
  elements: optional(z.array(z.record(z.string(), z.unknown()))),
  elementsYaml: optional(z.string()),
  template: optional(TemplateSchema),
});

const ClustersSchema = z.strictObject({
  selector: optional(LabelSelectorSchema),
  values: optional(stringMap),
  template: optional(TemplateSchema),
  flatList: optional(z.boolean()),
});

const PathItemSchema = z.strictObject({
  path: z.string().min(1, 'must not be empty'),
  exclude: optional(z.boolean()),
});

const GitSchema = z
  .strictObject({
    repoURL: z.string().min(1, 'must not be empty'),
    revision: optional(z.string()),
    directories: optional(z.array(PathItemSchema)),
    files: optional(z.array(PathItemSchema)),
    template: optional(TemplateSchema),
    requeueAfterSeconds: optional(z.number().int().nonnegative()),
    pathParamPrefix: optional(z.string()),
    values: optional(stringMap),
  })
  .superRefine((g, ctx) => {
    if (!g.directories?.length && !g.files?.length)
      ctx.addIssue({ code: 'custom', path: [], message: 'directories or files is required' });
  });

/** Generators Argo CD has and Capstan does not run (they reach SCM APIs, CRDs or plugins). */
export const UNSUPPORTED_GENERATORS = [
  'scmProvider',
  'pullRequest',
  'clusterDecisionResource',
  'plugin',
] as const;
export const SUPPORTED_GENERATORS = ['list', 'clusters', 'git', 'matrix', 'merge'] as const;

export interface GeneratorSpec {
  list?: z.output<typeof ListSchema>;
  clusters?: z.output<typeof ClustersSchema>;
  git?: z.output<typeof GitSchema>;
  matrix?: { generators: GeneratorSpec[]; template?: Template };
  merge?: { generators: GeneratorSpec[]; mergeKeys: string[]; template?: Template };
  selector?: LabelSelector;
}

/** Matrix and merge nest once inside each other, as Argo's types allow (nested -> terminal). */
const MAX_NESTING = 3;

function generatorSchema(depth: number): z.ZodType<GeneratorSpec> {
  const children = (): z.ZodType<GeneratorSpec[]> =>
    depth >= MAX_NESTING
      ? z.array(z.never({ error: 'matrix and merge generators nest at most two levels deep' }))
      : z.array(z.lazy(() => generatorSchema(depth + 1)));
  const shape = {
    list: optional(ListSchema),
    clusters: optional(ClustersSchema),
    git: optional(GitSchema),
    matrix: optional(
      z.strictObject({ generators: children(), template: optional(TemplateSchema) }).superRefine((m, ctx) => {
        if (m.generators.length > 2)
          ctx.addIssue({ code: 'custom', path: ['generators'], message: MATRIX_TOO_MANY });
        if (m.generators.length < 2)
          ctx.addIssue({ code: 'custom', path: ['generators'], message: MATRIX_TOO_FEW });
      }),
    ),
    merge: optional(
      z
        .strictObject({
          generators: children(),
          mergeKeys: optional(z.array(z.string())).transform((v) => v ?? []),
          template: optional(TemplateSchema),
        })
        .superRefine((m, ctx) => {
          if (m.generators.length < 2)
            ctx.addIssue({ code: 'custom', path: ['generators'], message: MERGE_TOO_FEW });
          if (m.mergeKeys.length < 1)
            ctx.addIssue({ code: 'custom', path: ['mergeKeys'], message: MERGE_NO_KEYS });
        }),
    ),
    selector: optional(LabelSelectorSchema),
  };
  return z
    .object(shape)
    .catchall(z.unknown())
    .superRefine((g, ctx) => {
      const keys = Object.keys(g as object);
      for (const k of keys) {
        if (k in shape) continue;
        const unsupported = (UNSUPPORTED_GENERATORS as readonly string[]).includes(k);
        ctx.addIssue({
          code: 'custom',
          path: [k],
          message: unsupported
            ? `the ${k} generator is not supported by Capstan (supported: ${SUPPORTED_GENERATORS.join(', ')})`
            : `unrecognized generator ${JSON.stringify(k)} (supported: ${SUPPORTED_GENERATORS.join(', ')})`,
        });
      }
      const set = SUPPORTED_GENERATORS.filter((k) => (g as Record<string, unknown>)[k] !== undefined);
      if (set.length === 0 && keys.every((k) => k in shape))
        ctx.addIssue({ code: 'custom', path: [], message: 'names no generator' });
      if (set.length > 1)
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: `names more than one generator (${set.join(', ')})`,
        });
    }) as unknown as z.ZodType<GeneratorSpec>;
}

export const GeneratorSchema = generatorSchema(1);

export const ApplicationSetSpecSchema = z.looseObject({
  generators: z.array(GeneratorSchema),
  template: TemplateSchema,
  templatePatch: optional(z.string()),
  goTemplate: optional(z.boolean()).transform((v) => v ?? false),
  goTemplateOptions: optional(z.array(z.string())).transform((v) => v ?? []),
  syncPolicy: optional(
    z.looseObject({
      preserveResourcesOnDeletion: optional(z.boolean()),
      applicationsSync: optional(z.enum(['create-only', 'create-update', 'create-delete', 'sync'])),
    }),
  ),
  strategy: optional(z.looseObject({})),
  preservedFields: optional(z.looseObject({})),
  ignoreApplicationDifferences: optional(z.array(z.looseObject({}))),
});

export const ApplicationSetSchema = z.looseObject({
  apiVersion: z.literal(ARGO_API_VERSION),
  kind: z.literal('ApplicationSet'),
  metadata: z.looseObject({
    name: z.string().min(1, 'must not be empty'),
    namespace: optional(z.string().min(1, 'must not be empty')),
    labels: optional(stringMap),
    annotations: optional(stringMap),
  }),
  spec: ApplicationSetSpecSchema,
});

export type LabelSelector = z.output<typeof LabelSelectorSchema>;
export type Template = z.output<typeof TemplateSchema>;
export type ApplicationSet = z.output<typeof ApplicationSetSchema>;
export type ApplicationSetSpec = z.output<typeof ApplicationSetSpecSchema>;
