// The ApplicationSets of the files `capstan appset create|apply|generate` name: every document, read by
// the shared bounded reader, checked for what the CLI itself relies on (kind, name, spec) before
// anything is sent, so a bad third document stops the command before the first set is created. The
// appset service validates the rest (generators, templates) with field paths.
import { apiv1 } from '@capstan/proto';
import { CliError } from '../errors.js';
import { documentName, readManifestDocuments, type ManifestDocument } from '../input/manifest-files.js';

const API_VERSION = 'argoproj.io/v1alpha1';

export interface ApplicationSetDocument extends ManifestDocument {
  /** `namespace/name`, or the name when the manifest names no namespace (Argo's QualifiedName). */
  readonly qualifiedName: string;
  /** What is sent to the api: metadata and spec (a status in the file is not sent). */
  readonly applicationSet: apiv1.ApplicationSet;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why a document cannot be sent as an ApplicationSet, or undefined when it can. */
export function applicationSetProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'expected an ApplicationSet object';
  if (value.kind !== 'ApplicationSet')
    return `kind: expected ApplicationSet, found ${value.kind === undefined ? 'none' : JSON.stringify(value.kind)}`;
  if (value.apiVersion !== undefined && value.apiVersion !== API_VERSION)
    return `apiVersion: expected ${API_VERSION}, found ${JSON.stringify(value.apiVersion)}`;
  const meta = value.metadata;
  // Argo CD's words for a set without a name.
  if (!isObject(meta) || typeof meta.name !== 'string' || meta.name === '')
    return 'metadata.name: ApplicationSet does not have Name field set';
  if (meta.namespace !== undefined && typeof meta.namespace !== 'string')
    return 'metadata.namespace: expected a string';
  if (!isObject(value.spec)) return 'spec: expected an object';
  return undefined;
}

export const qualifiedName = (meta: { name?: string; namespace?: string } | undefined): string =>
  meta?.namespace ? `${meta.namespace}/${meta.name ?? ''}` : (meta?.name ?? '');

/**
 * The ApplicationSets of the files, in file and document order. Every document must be an
 * ApplicationSet and no two may name the same set; otherwise nothing is returned and the error
 * (exit status 2) names the file and document.
 */
export function readApplicationSets(paths: readonly string[]): ApplicationSetDocument[] {
  const docs = readManifestDocuments(paths);
  if (docs.length === 0) throw new CliError('no ApplicationSets found in the input', 2);
  const seen = new Map<string, string>();
  return docs.map((d) => {
    const problem = applicationSetProblem(d.value);
    if (problem) throw new CliError(`${documentName(d)}: ${problem}`, 2);
    const { metadata, spec } = d.value as { metadata: unknown; spec: unknown };
    const applicationSet = apiv1.ApplicationSet.fromJSON({ metadata, spec });
    const name = qualifiedName(applicationSet.metadata);
    const earlier = seen.get(name);
    if (earlier)
      throw new CliError(`${documentName(d)}: ApplicationSet ${name} is also defined in ${earlier}`, 2);
    seen.set(name, documentName(d));
    return { ...d, qualifiedName: name, applicationSet };
  });
}

/** Argo's `namespace/name` argument, or the name with --appset-namespace. */
export function parseQualifiedName(arg: string, appsetNamespace = ''): { name: string; namespace: string } {
  const slash = arg.indexOf('/');
  if (slash < 0) return { name: arg, namespace: appsetNamespace };
  return { name: arg.slice(slash + 1), namespace: arg.slice(0, slash) };
}
