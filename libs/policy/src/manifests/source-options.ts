// Argo CD's per-tool options of an Application source (`spec.source.helm`, `.kustomize`,
// `.directory`), as Argo CD writes them. The objects are strict (a typo such as `valueFile` is an
// error, not a silently ignored option) and every list, map and text is bounded: they are tenant
// input that ends up in files and on the command line of helm and kustomize. The semantic rules
// (paths stay in the repository, no URLs, formats helm and kustomize would misread) are in
// `sourceOptionIssues`, which the api applies when an Application is written and the repo service
// applies again to every render request.
import { z } from 'zod';

/** `null` in YAML means "absent", as Go's nil does. */
function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => (v === null ? undefined : v) as z.output<T> | undefined);
}

export const SOURCE_OPTION_LIMITS = {
  /** values / valuesObject (as JSON), and one kustomize patch. */
  valuesBytes: 512 * 1024,
  listItems: 200,
  text: 4096,
  parameterValue: 64 * 1024,
} as const;

const L = SOURCE_OPTION_LIMITS;
const text = (max: number = L.text) => z.string().max(max, `must be at most ${max} characters`);
const list = <T extends z.ZodType>(item: T, what: string, max: number = L.listItems) =>
  z.array(item).max(max, `at most ${max} ${what}`);
const stringMap = (what: string) =>
  z
    .record(text(317), text())
    .refine((m) => Object.keys(m).length <= L.listItems, `at most ${L.listItems} ${what}`);

export const HelmParameterSchema = z.strictObject({
  name: text(1024).min(1, 'must not be empty'),
  value: optional(text(L.parameterValue)),
  forceString: optional(z.boolean()),
});

export const HelmFileParameterSchema = z.strictObject({
  name: text(1024).min(1, 'must not be empty'),
  path: text().min(1, 'must not be empty'),
});

/** Argo CD's ApplicationSourceHelm. */
export const HelmSourceSchema = z.strictObject({
  valueFiles: optional(list(text(), 'value files')),
  parameters: optional(list(HelmParameterSchema, 'parameters', 1000)),
  fileParameters: optional(list(HelmFileParameterSchema, 'file parameters')),
  releaseName: optional(text(253)),
  values: optional(text(L.valuesBytes)),
  valuesObject: optional(
    z
      .record(z.string(), z.unknown())
      .refine(
        (v) => JSON.stringify(v).length <= L.valuesBytes,
        `must be at most ${L.valuesBytes} bytes as JSON`,
      ),
  ),
  version: optional(text(16)),
  passCredentials: optional(z.boolean()),
  ignoreMissingValueFiles: optional(z.boolean()),
  skipCrds: optional(z.boolean()),
  skipSchemaValidation: optional(z.boolean()),
  skipTests: optional(z.boolean()),
  namespace: optional(text(63)),
  kubeVersion: optional(text(64)),
  apiVersions: optional(list(text(253), 'API versions', 1000)),
});

export const KustomizePatchSchema = z.strictObject({
  path: optional(text()),
  patch: optional(text(L.valuesBytes)),
  target: optional(
    z.strictObject({
      group: optional(text(253)),
      version: optional(text(253)),
      kind: optional(text(253)),
      name: optional(text(253)),
      namespace: optional(text(253)),
      labelSelector: optional(text()),
      annotationSelector: optional(text()),
    }),
  ),
  options: optional(z.record(text(64), z.boolean())),
});

export const KustomizeReplicaSchema = z.strictObject({
  name: text(253).min(1, 'must not be empty'),
  // Argo CD: an int or a string holding one.
  count: z.union([
    z.number().int('must be a whole number').nonnegative('must be a whole number'),
    z.string().regex(/^\d{1,9}$/, 'must be a whole number'),
  ]),
});

/** Argo CD's ApplicationSourceKustomize. */
export const KustomizeSourceSchema = z.strictObject({
  namePrefix: optional(text(253)),
  nameSuffix: optional(text(253)),
  images: optional(list(text(1024), 'images')),
  commonLabels: optional(stringMap('labels')),
  commonAnnotations: optional(stringMap('annotations')),
  commonAnnotationsEnvsubst: optional(z.boolean()),
  forceCommonLabels: optional(z.boolean()),
  forceCommonAnnotations: optional(z.boolean()),
  labelWithoutSelector: optional(z.boolean()),
  labelIncludeTemplates: optional(z.boolean()),
  namespace: optional(text(63)),
  replicas: optional(list(KustomizeReplicaSchema, 'replicas')),
  patches: optional(list(KustomizePatchSchema, 'patches', 100)),
  components: optional(list(text(), 'components', 100)),
  ignoreMissingComponents: optional(z.boolean()),
  version: optional(text(64)),
  kubeVersion: optional(text(64)),
  apiVersions: optional(list(text(253), 'API versions', 1000)),
});

export const JsonnetVarSchema = z.strictObject({
  name: text(1024).min(1, 'must not be empty'),
  value: optional(text(L.parameterValue)),
  code: optional(z.boolean()),
});

/** Argo CD's ApplicationSourceDirectory. */
export const DirectorySourceSchema = z.strictObject({
  recurse: optional(z.boolean()),
  include: optional(text()),
  exclude: optional(text()),
  jsonnet: optional(
    z.strictObject({
      extVars: optional(list(JsonnetVarSchema, 'ext vars')),
      tlas: optional(list(JsonnetVarSchema, 'top-level arguments')),
      libs: optional(list(text(), 'library paths', 100)),
    }),
  ),
});

/** A schema's output with the keys that may be undefined also optional (so literals need not list them). */
type Optionals<T> = T extends readonly (infer U)[]
  ? Optionals<U>[]
  : T extends object
    ? { [K in keyof T as undefined extends T[K] ? K : never]?: Optionals<T[K]> } & {
        [K in keyof T as undefined extends T[K] ? never : K]: Optionals<T[K]>;
      }
    : T;

export type HelmSource = Optionals<z.output<typeof HelmSourceSchema>>;
export type KustomizeSource = Optionals<z.output<typeof KustomizeSourceSchema>>;
export type DirectorySource = Optionals<z.output<typeof DirectorySourceSchema>>;
