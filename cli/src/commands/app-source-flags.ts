// The source-tool flags of `capstan app create` and `capstan app set`, named and merged as
// argocd's (cmd/util/app.go): Helm (--values, --helm-set, --helm-set-string, --helm-set-file,
// --release-name, ...), Kustomize (--kustomize-image, --nameprefix, --namesuffix, ...) and
// directory/jsonnet (--directory-recurse, --directory-include, --jsonnet-ext-var-str, ...). A
// parameter, image, replica or jsonnet variable replaces the one with the same name; lists such as
// --values replace the list. The api validates what results.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { CliError } from '../errors.js';

export interface SourceFlags {
  values: string[];
  valuesLiteralFile?: string;
  helmSet: string[];
  helmSetString: string[];
  helmSetFile: string[];
  releaseName?: string;
  helmVersion?: string;
  helmNamespace?: string;
  helmKubeVersion?: string;
  helmApiVersions: string[];
  helmSkipCrds?: boolean;
  helmSkipTests?: boolean;
  helmSkipSchemaValidation?: boolean;
  helmPassCredentials?: boolean;
  ignoreMissingValueFiles?: boolean;
  kustomizeImage: string[];
  nameprefix?: string;
  namesuffix?: string;
  kustomizeCommonLabel: string[];
  kustomizeCommonAnnotation: string[];
  kustomizeForceCommonLabel?: boolean;
  kustomizeForceCommonAnnotation?: boolean;
  kustomizeLabelWithoutSelector?: boolean;
  kustomizeNamespace?: string;
  kustomizeReplica: string[];
  kustomizeVersion?: string;
  directoryRecurse?: boolean;
  directoryInclude?: string;
  directoryExclude?: string;
  jsonnetExtVarStr: string[];
  jsonnetExtVarCode: string[];
  jsonnetTlaStr: string[];
  jsonnetTlaCode: string[];
  jsonnetLibs: string[];
}

const many = (v: string, p: string[]) => [...p, v];

/** No flag given (the repeatable ones empty). */
export const NO_SOURCE_FLAGS: SourceFlags = {
  values: [],
  helmSet: [],
  helmSetString: [],
  helmSetFile: [],
  helmApiVersions: [],
  kustomizeImage: [],
  kustomizeCommonLabel: [],
  kustomizeCommonAnnotation: [],
  kustomizeReplica: [],
  jsonnetExtVarStr: [],
  jsonnetExtVarCode: [],
  jsonnetTlaStr: [],
  jsonnetTlaCode: [],
  jsonnetLibs: [],
};

export function addSourceFlags(cmd: Command): Command {
  return cmd
    .option('--values <file>', 'Helm value file in the repository (repeatable; replaces the list)', many, [])
    .option('--values-literal-file <path>', "a local file whose content becomes the source's helm values")
    .option('--helm-set <name=value>', 'Helm parameter (repeatable)', many, [])
    .option('--helm-set-string <name=value>', 'Helm string parameter (repeatable)', many, [])
    .option(
      '--helm-set-file <name=path>',
      'Helm parameter from a file of the repository (repeatable)',
      many,
      [],
    )
    .option('--release-name <name>', 'Helm release name (default: the Application name)')
    .option('--helm-version <v>', 'Helm version: v3')
    .option('--helm-namespace <ns>', 'namespace Helm renders for (default: the destination namespace)')
    .option('--helm-kube-version <version>', 'Kubernetes version for .Capabilities.KubeVersion')
    .option(
      '--helm-api-versions <apiVersion>',
      'API version for .Capabilities.APIVersions (repeatable)',
      many,
      [],
    )
    .option('--helm-skip-crds', "leave out the chart's crds/")
    .option('--helm-skip-tests', 'leave out test hooks')
    .option('--helm-skip-schema-validation', 'skip values.schema.json validation')
    .option('--helm-pass-credentials', 'pass credentials to all domains (accepted; see docs/sources.md)')
    .option('--ignore-missing-value-files', 'ignore value files that do not exist')
    .option(
      '--kustomize-image <image>',
      'Kustomize image override, e.g. nginx=nginx:1.27 (repeatable)',
      many,
      [],
    )
    .option('--nameprefix <prefix>', 'Kustomize name prefix')
    .option('--namesuffix <suffix>', 'Kustomize name suffix')
    .option('--kustomize-common-label <k=v>', 'Kustomize common label (repeatable)', many, [])
    .option('--kustomize-common-annotation <k=v>', 'Kustomize common annotation (repeatable)', many, [])
    .option('--kustomize-force-common-label', 'common labels override existing ones')
    .option('--kustomize-force-common-annotation', 'common annotations override existing ones')
    .option('--kustomize-label-without-selector', 'common labels stay out of selectors')
    .option('--kustomize-namespace <ns>', 'Kustomize namespace')
    .option('--kustomize-replica <name=count>', 'Kustomize replica override (repeatable)', many, [])
    .option('--kustomize-version <version>', 'Kustomize version')
    .option('--directory-recurse', 'read the path recursively')
    .option('--directory-include <glob>', 'only files matching this glob, e.g. {a.yaml,b/*}')
    .option('--directory-exclude <glob>', 'leave out files matching this glob')
    .option('--jsonnet-ext-var-str <name=value>', 'Jsonnet external string variable (repeatable)', many, [])
    .option('--jsonnet-ext-var-code <name=code>', 'Jsonnet external code variable (repeatable)', many, [])
    .option('--jsonnet-tla-str <name=value>', 'Jsonnet top-level string argument (repeatable)', many, [])
    .option('--jsonnet-tla-code <name=code>', 'Jsonnet top-level code argument (repeatable)', many, [])
    .option('--jsonnet-libs <path>', 'Jsonnet library directory in the repository (repeatable)', many, []);
}

function pair(flag: string, v: string): [string, string] {
  const i = v.indexOf('=');
  if (i <= 0) throw new CliError(`${flag}: expected name=value, got ${JSON.stringify(v)}`, 2);
  return [v.slice(0, i), v.slice(i + 1)];
}

/** `items` with `added` replacing the item of the same name (appended otherwise). */
function mergeNamed<T>(items: readonly T[], added: readonly T[], nameOf: (t: T) => string): T[] {
  const out = [...items];
  for (const a of added) {
    const i = out.findIndex((x) => nameOf(x) === nameOf(a));
    if (i >= 0) out[i] = a;
    else out.push(a);
  }
  return out;
}

/** argocd's image name: what comes before "=", else before the tag or digest. */
const imageName = (image: string) =>
  image
    .split('=')[0]!
    .split('@')[0]!
    .replace(/:[^/]*$/, '');

function helmOf(h: apiv1.ApplicationSourceHelm | undefined, o: SourceFlags) {
  const given =
    o.values.length +
      o.helmSet.length +
      o.helmSetString.length +
      o.helmSetFile.length +
      o.helmApiVersions.length >
      0 ||
    [
      o.valuesLiteralFile,
      o.releaseName,
      o.helmVersion,
      o.helmNamespace,
      o.helmKubeVersion,
      o.helmSkipCrds,
      o.helmSkipTests,
      o.helmSkipSchemaValidation,
      o.helmPassCredentials,
      o.ignoreMissingValueFiles,
    ].some((v) => v !== undefined);
  if (!given) return h;
  const out = { ...(h ?? apiv1.ApplicationSourceHelm.fromPartial({})) };
  if (o.values.length > 0) out.valueFiles = o.values;
  if (o.valuesLiteralFile !== undefined) out.values = readFileSync(o.valuesLiteralFile, 'utf8');
  const params = [
    ...o.helmSet
      .map((v) => pair('--helm-set', v))
      .map(([name, value]) => ({ name, value, forceString: false })),
    ...o.helmSetString
      .map((v) => pair('--helm-set-string', v))
      .map(([name, value]) => ({ name, value, forceString: true })),
  ];
  out.parameters = mergeNamed(out.parameters, params, (p) => p.name);
  const files = o.helmSetFile.map((v) => pair('--helm-set-file', v)).map(([name, path]) => ({ name, path }));
  out.fileParameters = mergeNamed(out.fileParameters, files, (p) => p.name);
  if (o.releaseName !== undefined) out.releaseName = o.releaseName;
  if (o.helmVersion !== undefined) out.version = o.helmVersion;
  if (o.helmNamespace !== undefined) out.namespace = o.helmNamespace;
  if (o.helmKubeVersion !== undefined) out.kubeVersion = o.helmKubeVersion;
  if (o.helmApiVersions.length > 0) out.apiVersions = o.helmApiVersions;
  if (o.helmSkipCrds !== undefined) out.skipCrds = o.helmSkipCrds;
  if (o.helmSkipTests !== undefined) out.skipTests = o.helmSkipTests;
  if (o.helmSkipSchemaValidation !== undefined) out.skipSchemaValidation = o.helmSkipSchemaValidation;
  if (o.helmPassCredentials !== undefined) out.passCredentials = o.helmPassCredentials;
  if (o.ignoreMissingValueFiles !== undefined) out.ignoreMissingValueFiles = o.ignoreMissingValueFiles;
  return out;
}

function kustomizeOf(k: apiv1.ApplicationSourceKustomize | undefined, o: SourceFlags) {
  const lists = [o.kustomizeImage, o.kustomizeCommonLabel, o.kustomizeCommonAnnotation, o.kustomizeReplica];
  const scalars = [
    o.nameprefix,
    o.namesuffix,
    o.kustomizeNamespace,
    o.kustomizeVersion,
    o.kustomizeForceCommonLabel,
    o.kustomizeForceCommonAnnotation,
    o.kustomizeLabelWithoutSelector,
  ];
  if (lists.every((l) => l.length === 0) && scalars.every((v) => v === undefined)) return k;
  const out = { ...(k ?? apiv1.ApplicationSourceKustomize.fromPartial({})) };
  out.images = mergeNamed(out.images, o.kustomizeImage, imageName);
  const map = (flag: string, vs: string[]) => Object.fromEntries(vs.map((v) => pair(flag, v)));
  out.commonLabels = { ...out.commonLabels, ...map('--kustomize-common-label', o.kustomizeCommonLabel) };
  out.commonAnnotations = {
    ...out.commonAnnotations,
    ...map('--kustomize-common-annotation', o.kustomizeCommonAnnotation),
  };
  const replicas = o.kustomizeReplica
    .map((v) => pair('--kustomize-replica', v))
    .map(([name, count]) => ({ name, count }));
  out.replicas = mergeNamed(out.replicas, replicas, (r) => r.name);
  if (o.nameprefix !== undefined) out.namePrefix = o.nameprefix;
  if (o.namesuffix !== undefined) out.nameSuffix = o.namesuffix;
  if (o.kustomizeNamespace !== undefined) out.namespace = o.kustomizeNamespace;
  if (o.kustomizeVersion !== undefined) out.version = o.kustomizeVersion;
  if (o.kustomizeForceCommonLabel !== undefined) out.forceCommonLabels = o.kustomizeForceCommonLabel;
  if (o.kustomizeForceCommonAnnotation !== undefined)
    out.forceCommonAnnotations = o.kustomizeForceCommonAnnotation;
  if (o.kustomizeLabelWithoutSelector !== undefined)
    out.labelWithoutSelector = o.kustomizeLabelWithoutSelector;
  return out;
}

function directoryOf(d: apiv1.ApplicationSourceDirectory | undefined, o: SourceFlags) {
  const vars = (flag: string, vs: string[], code: boolean) =>
    vs.map((v) => pair(flag, v)).map(([name, value]) => ({ name, value, code }));
  const extVars = [
    ...vars('--jsonnet-ext-var-str', o.jsonnetExtVarStr, false),
    ...vars('--jsonnet-ext-var-code', o.jsonnetExtVarCode, true),
  ];
  const tlas = [
    ...vars('--jsonnet-tla-str', o.jsonnetTlaStr, false),
    ...vars('--jsonnet-tla-code', o.jsonnetTlaCode, true),
  ];
  const scalars = [o.directoryRecurse, o.directoryInclude, o.directoryExclude];
  if (extVars.length + tlas.length + o.jsonnetLibs.length === 0 && scalars.every((v) => v === undefined))
    return d;
  const out = { ...(d ?? apiv1.ApplicationSourceDirectory.fromPartial({})) };
  if (o.directoryRecurse !== undefined) out.recurse = o.directoryRecurse;
  if (o.directoryInclude !== undefined) out.include = o.directoryInclude;
  if (o.directoryExclude !== undefined) out.exclude = o.directoryExclude;
  if (extVars.length + tlas.length + o.jsonnetLibs.length > 0) {
    const j = { ...(out.jsonnet ?? apiv1.ApplicationSourceJsonnet.fromPartial({})) };
    j.extVars = mergeNamed(j.extVars, extVars, (v) => v.name);
    j.tlas = mergeNamed(j.tlas, tlas, (v) => v.name);
    if (o.jsonnetLibs.length > 0) j.libs = o.jsonnetLibs;
    out.jsonnet = j;
  }
  return out;
}

/** The source with the flags' changes (pure). */
export function applySourceFlags(source: apiv1.ApplicationSource, o: SourceFlags): apiv1.ApplicationSource {
  return {
    ...source,
    helm: helmOf(source.helm, o),
    kustomize: kustomizeOf(source.kustomize, o),
    directory: directoryOf(source.directory, o),
  };
}

/** Whether any source-tool flag was given (they edit one source: spec.source). */
export function sourceFlagsGiven(o: SourceFlags): boolean {
  const empty = apiv1.ApplicationSource.fromPartial({});
  const given = apiv1.ApplicationSource.toJSON(applySourceFlags(empty, o));
  const none = apiv1.ApplicationSource.toJSON(applySourceFlags(empty, NO_SOURCE_FLAGS));
  return JSON.stringify(given) !== JSON.stringify(none);
}
