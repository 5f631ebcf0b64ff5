// Which Applications a watch event concerns (no I/O): live objects by the Application instance their
// tracking id names (Argo CD's argocd.argoproj.io/tracking-id), and declared objects by the
// Applications that declare them (an object that lost or never had its tracking id still concerns
// them). Objects are referred to by key — informer, namespace, name — and read from the informer.
import { TRACKING_ANNOTATION } from '@capstan/policy';
import { parseTrackingId } from '../apply/tracking.js';

export const objectKey = (informer: string, namespace: string, name: string) =>
  `${informer}\u0001${namespace}\u0001${name}`;

export function splitObjectKey(key: string): { informer: string; namespace: string; name: string } {
  const [informer, namespace, name] = key.split('\u0001') as [string, string, string];
  return { informer, namespace, name };
}

interface LiveMeta {
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
}

export function instanceOf(obj: LiveMeta): string | undefined {
  const value = obj.metadata?.annotations?.[TRACKING_ANNOTATION];
  return typeof value === 'string' ? parseTrackingId(value)?.instance : undefined;
}

function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}

export class LiveIndex {
  /** instance → object keys whose tracking id names it. */
  private readonly tracked = new Map<string, Set<string>>();
  private readonly instanceOfObject = new Map<string, string>();
  /** instance → Applications (usually one). */
  private readonly apps = new Map<string, Set<string>>();
  /** object key → Applications declaring it. */
  private readonly declared = new Map<string, Set<string>>();

  /** A live object changed (or was deleted): the Applications it concerns, before and after. */
  observe(informer: string, obj: LiveMeta, deleted: boolean): Set<string> {
    const key = objectKey(informer, obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
    const concerned = new Set<string>(this.declared.get(key) ?? []);
    const before = this.instanceOfObject.get(key);
    const after = deleted ? undefined : instanceOf(obj);
    for (const i of [before, after]) if (i) for (const a of this.apps.get(i) ?? []) concerned.add(a);
    if (before !== after) {
      if (before) removeFrom(this.tracked, before, key);
      if (after) addTo(this.tracked, after, key);
      if (after) this.instanceOfObject.set(key, after);
      else this.instanceOfObject.delete(key);
    }
    return concerned;
  }

  /** Objects (keys) whose tracking id names this instance. */
  trackedBy(instance: string): ReadonlySet<string> {
    return this.tracked.get(instance) ?? new Set();
  }

  /** Forgets every object of an informer that stopped. */
  dropInformer(informer: string): void {
    const prefix = `${informer}\u0001`;
    for (const [key, instance] of this.instanceOfObject) {
      if (!key.startsWith(prefix)) continue;
      removeFrom(this.tracked, instance, key);
      this.instanceOfObject.delete(key);
    }
  }

  /** Replaces what an Application declares and which instance it is. */
  setApplication(
    app: string,
    instance: string | undefined,
    declared: readonly string[],
    previous?: { instance?: string; declared: readonly string[] },
  ): void {
    if (previous) {
      if (previous.instance) removeFrom(this.apps, previous.instance, app);
      for (const k of previous.declared) removeFrom(this.declared, k, app);
    }
    if (instance) addTo(this.apps, instance, app);
    for (const k of declared) addTo(this.declared, k, app);
  }
}
