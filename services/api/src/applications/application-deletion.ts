// Argo CD's deletion rules for an Application (pure): the resources finalizer
// (`resources-finalizer.argocd.argoproj.io`, foreground, or `…/background`) makes a deletion cascade
// to the Application's resources; ApplicationService.Delete with cascade sets it (with the
// propagation policy's variant), cascade=false removes it (the resources are orphaned), and with
// neither the Application's own finalizers decide (an Argo user writes the finalizer in the manifest).
import { ValidationError } from '@capstan/service';
import type { Application } from '@capstan/policy';

export const FOREGROUND_FINALIZER = 'resources-finalizer.argocd.argoproj.io';
export const BACKGROUND_FINALIZER = 'resources-finalizer.argocd.argoproj.io/background';
const RESOURCE_FINALIZERS = new Set([FOREGROUND_FINALIZER, BACKGROUND_FINALIZER]);

export type PropagationPolicy = 'foreground' | 'background';

export interface DeleteOptions {
  /** undefined: the Application's finalizers decide. */
  cascade: boolean | undefined;
  /** Only with cascade; undefined keeps the Application's variant (foreground when it has none). */
  propagationPolicy: PropagationPolicy | undefined;
}

/**
 * The API's `cascade` and `propagationPolicy` as Argo CD reads them; `orphan` is Capstan's spelling
 * of cascade=false. Bad input is a field error.
 */
export function parseDeleteOptions(cascade: boolean | undefined, policy: string): DeleteOptions {
  const p = policy.trim().toLowerCase();
  if (p === '') return { cascade, propagationPolicy: undefined };
  if (p === 'orphan') {
    if (cascade === true)
      throw new ValidationError([
        { field: 'propagationPolicy', description: 'orphan contradicts cascade=true' },
      ]);
    return { cascade: false, propagationPolicy: undefined };
  }
  if (p !== 'foreground' && p !== 'background')
    throw new ValidationError([
      { field: 'propagationPolicy', description: `invalid propagation policy: ${policy}` },
    ]);
  if (cascade === false)
    throw new ValidationError([
      { field: 'propagationPolicy', description: `${p} needs cascade; cascade=false orphans the resources` },
    ]);
  return { cascade, propagationPolicy: p };
}

export function finalizersOf(app: Application): string[] {
  const f = (app.metadata as { finalizers?: unknown }).finalizers;
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

export function deletionTimestampOf(app: Application | undefined): string | undefined {
  const t = (app?.metadata as { deletionTimestamp?: unknown } | undefined)?.deletionTimestamp;
  return typeof t === 'string' ? t : undefined;
}

/** The resources finalizer the Application carries, if any (foreground wins when it has both). */
export function resourcesFinalizerOf(app: Application): PropagationPolicy | undefined {
  const f = finalizersOf(app);
  if (f.includes(FOREGROUND_FINALIZER)) return 'foreground';
  if (f.includes(BACKGROUND_FINALIZER)) return 'background';
  return undefined;
}

/** The finalizers after a delete request: what decides whether (and how) the deletion cascades. */
export function finalizersAfterDelete(app: Application, options: DeleteOptions): string[] {
  const others = finalizersOf(app).filter((f) => !RESOURCE_FINALIZERS.has(f));
  if (options.cascade === false) return others;
  if (options.cascade === undefined) return finalizersOf(app);
  const policy = options.propagationPolicy ?? resourcesFinalizerOf(app) ?? 'foreground';
  return [...others, policy === 'foreground' ? FOREGROUND_FINALIZER : BACKGROUND_FINALIZER];
}

/** The Application as it stays while its resources are deleted: finalizers and deletionTimestamp set. */
export function markedForDeletion(app: Application, finalizers: string[], at: Date): Application {
  return {
    ...app,
    metadata: { ...app.metadata, finalizers, deletionTimestamp: at.toISOString() } as Application['metadata'],
  };
}
