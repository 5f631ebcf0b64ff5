// Argo CD's sync options (pure, no I/O): `spec.syncPolicy.syncOptions` of the Application and the
// `argocd.argoproj.io/sync-options` annotation of a resource (comma separated, white space trimmed).
// As in gitops-engine, an option is an exact `Key=value` string; the resource's annotation decides
// where Argo lets it override the Application (Prune, Delete, ServerSideApply) and adds to it
// elsewhere (Replace, Force, PruneLast, Validate=false). Options Argo does not know are ignored,
// as Argo does, but reported as warnings so a typo does not go unnoticed.

export const SYNC_OPTIONS_ANNOTATION = 'argocd.argoproj.io/sync-options';
/** Argo CD's confirmation of Prune=confirm / Delete=confirm, an ISO timestamp on the Application. */
export const DELETION_APPROVED_ANNOTATION = 'argocd.argoproj.io/deletion-approved';

export type PruneOption = 'true' | 'false' | 'confirm';
export type PropagationPolicy = 'foreground' | 'background' | 'orphan';

/** The Application's options (spec.syncPolicy.syncOptions), defaults as Argo CD's. */
export interface AppSyncOptions {
  /** Prune=false|confirm as the Application's default for every resource (undefined: prune). */
  prune: PruneOption | undefined;
  /** Delete=false|confirm on cascade deletion of the Application. */
  delete: PruneOption | undefined;
  /** Validate=false: server-side field validation Ignore instead of Strict. */
  validate: boolean;
  createNamespace: boolean;
  pruneLast: boolean;
  applyOutOfSyncOnly: boolean;
  /** ServerSideApply=true|false; undefined when not given. Capstan applies server-side either way. */
  serverSideApply: boolean | undefined;
  replace: boolean;
  force: boolean;
  failOnSharedResource: boolean;
  /**
   * PrunePropagationPolicy. Unless given: background, Capstan's prune since its first release,
   * where Argo CD defaults to foreground (docs/applications.md says why).
   */
  prunePropagationPolicy: PropagationPolicy;
  respectIgnoreDifferences: boolean;
  /** Options Argo CD does not know (ignored) or values it does not accept, as messages. */
  warnings: string[];
}

/** A resource's own options (its sync-options annotation); undefined: not given. */
export interface ResourceSyncOptions {
  prune: PruneOption | undefined;
  delete: PruneOption | undefined;
  validate: false | undefined;
  pruneLast: true | undefined;
  serverSideApply: boolean | undefined;
  replace: boolean | undefined;
  force: true | undefined;
  warnings: string[];
}

/**
 * Every option Argo CD knows, by key, with the values it gives a meaning. Options Capstan accepts
 * without acting on them (SkipDryRunOnMissingResource, ClientSideApplyMigration) are known here.
 */
const KNOWN: Record<string, readonly string[]> = {
  Prune: ['true', 'false', 'confirm'],
  Delete: ['true', 'false', 'confirm'],
  Validate: ['true', 'false'],
  CreateNamespace: ['true', 'false'],
  PruneLast: ['true', 'false'],
  ApplyOutOfSyncOnly: ['true', 'false'],
  ServerSideApply: ['true', 'false'],
  Replace: ['true', 'false'],
  Force: ['true', 'false'],
  FailOnSharedResource: ['true', 'false'],
  PrunePropagationPolicy: ['foreground', 'background', 'orphan'],
  RespectIgnoreDifferences: ['true', 'false'],
  SkipDryRunOnMissingResource: ['true', 'false'],
  ClientSideApplyMigration: ['true', 'false'],
};

/** Splits `Key=value` entries; unknown keys and values become warnings (`where` names the source). */
function entries(
  list: readonly string[],
  where: string,
): { values: Map<string, string>; warnings: string[] } {
  const values = new Map<string, string>();
  const warnings: string[] = [];
  for (const raw of list) {
    const option = raw.trim();
    if (option === '') continue;
    const eq = option.indexOf('=');
    const key = eq < 0 ? option : option.slice(0, eq);
    const value = eq < 0 ? '' : option.slice(eq + 1);
    const known = KNOWN[key];
    if (!known) {
      warnings.push(`unknown sync option ${JSON.stringify(option)} in ${where} ignored`);
      continue;
    }
    if (!known.includes(value)) {
      warnings.push(
        `sync option ${JSON.stringify(option)} in ${where} ignored: ${key} takes ${known.join(', ')}`,
      );
      continue;
    }
    // Argo CD looks options up by exact string: with two values for one key, the first that is
    // asked for wins; the last one given is as good a rule and says so.
    if (values.has(key) && values.get(key) !== value)
      warnings.push(`sync option ${key} given twice in ${where}: ${key}=${value} applies`);
    values.set(key, value);
  }
  return { values, warnings };
}

const flag = (values: Map<string, string>, key: string): boolean | undefined =>
  values.has(key) ? values.get(key) === 'true' : undefined;

/** The Application's spec.syncPolicy.syncOptions. */
export function parseAppSyncOptions(list: readonly string[] | undefined): AppSyncOptions {
  const { values, warnings } = entries(list ?? [], 'spec.syncPolicy.syncOptions');
  const pruneValue = values.get('Prune') as PruneOption | undefined;
  const deleteValue = values.get('Delete') as PruneOption | undefined;
  return {
    prune: pruneValue === 'true' ? undefined : pruneValue,
    delete: deleteValue === 'true' ? undefined : deleteValue,
    validate: values.get('Validate') !== 'false',
    createNamespace: flag(values, 'CreateNamespace') === true,
    pruneLast: flag(values, 'PruneLast') === true,
    applyOutOfSyncOnly: flag(values, 'ApplyOutOfSyncOnly') === true,
    serverSideApply: flag(values, 'ServerSideApply'),
    replace: flag(values, 'Replace') === true,
    force: flag(values, 'Force') === true,
    failOnSharedResource: flag(values, 'FailOnSharedResource') === true,
    prunePropagationPolicy: (values.get('PrunePropagationPolicy') as PropagationPolicy) ?? 'background',
    respectIgnoreDifferences: flag(values, 'RespectIgnoreDifferences') === true,
    warnings,
  };
}

/** Options that only an Application can carry; on a resource Argo CD ignores them. */
const APP_ONLY = new Set([
  'CreateNamespace',
  'ApplyOutOfSyncOnly',
  'FailOnSharedResource',
  'PrunePropagationPolicy',
  'RespectIgnoreDifferences',
]);

/** A resource's `argocd.argoproj.io/sync-options` annotation (`what` names it in warnings). */
export function parseResourceSyncOptions(object: unknown, what = 'a resource'): ResourceSyncOptions {
  const annotations = (object as { metadata?: { annotations?: Record<string, unknown> } } | undefined)
    ?.metadata?.annotations;
  const text = annotations?.[SYNC_OPTIONS_ANNOTATION];
  const where = `the ${SYNC_OPTIONS_ANNOTATION} annotation of ${what}`;
  const { values, warnings } = entries(typeof text === 'string' ? text.split(',') : [], where);
  for (const key of values.keys())
    if (APP_ONLY.has(key))
      warnings.push(`sync option ${key} in ${where} ignored: it applies to Applications only`);
  return {
    prune: values.get('Prune') as PruneOption | undefined,
    delete: values.get('Delete') as PruneOption | undefined,
    validate: values.get('Validate') === 'false' ? false : undefined,
    pruneLast: values.get('PruneLast') === 'true' ? true : undefined,
    serverSideApply: flag(values, 'ServerSideApply'),
    replace: flag(values, 'Replace'),
    force: values.get('Force') === 'true' ? true : undefined,
    warnings,
  };
}

/** How one object is written: gitops-engine's applyObject rules. */
export interface WriteMode {
  /** PUT (create when absent) instead of apply. */
  replace: boolean;
  /** With replace: delete and create again. */
  force: boolean;
  /** Server-side field validation: Strict, or Ignore with Validate=false. */
  fieldValidation: 'Strict' | 'Ignore';
  /** What ServerSideApply asked for (documentation only: Capstan applies server-side). */
  serverSideApply: boolean;
}

export function writeMode(app: AppSyncOptions, resource: ResourceSyncOptions): WriteMode {
  return {
    // The Application's Replace=true, or the resource's: Replace=false on a resource only
    // takes back what the annotation alone would give (as in gitops-engine).
    replace: app.replace || resource.replace === true,
    force: app.force || resource.force === true,
    fieldValidation: app.validate && resource.validate !== false ? 'Strict' : 'Ignore',
    serverSideApply: resource.serverSideApply ?? app.serverSideApply ?? true,
  };
}

/** Whether and when an object no longer declared is pruned (options of its live object win). */
export interface PruneMode {
  prune: PruneOption;
  last: boolean;
}

export function pruneMode(app: AppSyncOptions, live: ResourceSyncOptions): PruneMode {
  return { prune: live.prune ?? app.prune ?? 'true', last: app.pruneLast || live.pruneLast === true };
}

/** Whether cascade deletion of the Application deletes this object (its live options win). */
export function deleteMode(app: AppSyncOptions, live: ResourceSyncOptions): PruneOption {
  return live.delete ?? app.delete ?? 'true';
}

/**
 * Argo CD's confirmation: the Application's deletion-approved annotation, an ISO timestamp later
 * than `since` (the previous operation of the Application ended then: a confirmation is good for
 * the one sync that follows it).
 */
export function deletionApproved(
  appAnnotations: Record<string, string> | undefined,
  since: Date | undefined,
): boolean {
  const text = appAnnotations?.[DELETION_APPROVED_ANNOTATION];
  if (!text) return false;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return false;
  return since === undefined || at > since.getTime();
}

export function propagationOf(policy: PropagationPolicy): 'Foreground' | 'Background' | 'Orphan' {
  return policy === 'foreground' ? 'Foreground' : policy === 'background' ? 'Background' : 'Orphan';
}
