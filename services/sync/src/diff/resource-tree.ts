// Argo CD's ResourceTree and ListResourceEvents, read AS THE APPLICATION'S IDENTITY (the one a sync
// would use, decided the same way; managed-resources.ts): the live objects the Application manages,
// then the objects they own (owned-objects.ts), level by level, each kind listed once per namespace.
// Bounded: at most MAX_TREE_NODES nodes and MAX_TREE_DEPTH levels, every list a single page; a cut
// says `truncated`. A list or read the identity may not make is a warning naming it, and the objects
// stay out: never read again with the control plane's credentials.
import type { HealthAssessor, LiveObject as HealthObject } from '@capstan/health';
import type { apiv1 } from '@capstan/proto';
import { InvalidArgumentError } from '@capstan/service';
import { describeRef } from '../apply/plan.js';
import { ownershipOf } from '../apply/tracking.js';
import { httpStatusOf, kubeMessageOf } from '../kube/kube-errors.js';
import { type TargetCluster } from '../kube/target-cluster.js';
import { managedRead, readLive, type ManagedResourcesDeps, type WorkItem } from './managed-resources.js';
import { childKindsOf, nodeOf, ownedBy, type ChildKind, type LiveObject } from './owned-objects.js';

export const MAX_TREE_NODES = 500;
export const MAX_TREE_DEPTH = 4;
/** Events of one object: Kubernetes keeps an hour of them; the newest page is enough for a panel. */
export const MAX_EVENTS = 200;
const READ_CONCURRENCY = 8;

export type ResourceTreeDeps = Omit<ManagedResourcesDeps, 'logger'> & { health: HealthAssessor };

interface TreeState {
  nodes: apiv1.ResourceNode[];
  seen: Set<string>;
  warnings: string[];
  truncated: boolean;
}

export async function resourceTree(
  deps: ResourceTreeDeps,
  app: { namespace: string; name: string },
): Promise<apiv1.ApplicationTree> {
  return (await treeAndCluster(deps, app)).tree;
}

async function treeAndCluster(deps: ResourceTreeDeps, app: { namespace: string; name: string }) {
  const { cluster, tracking, work } = await managedRead(deps, app);
  const state: TreeState = { nodes: [], seen: new Set(), warnings: [], truncated: false };
  const assess = (o: LiveObject) => deps.health.assess(o as unknown as HealthObject);
  const managed: LiveObject[] = [];
  const readOne = async (w: WorkItem): Promise<LiveObject | undefined> => {
    try {
      const live = (await readLive(cluster, w.ref)) as LiveObject | undefined;
      // An object git no longer declares is in the tree while it is still this Application's.
      if (!live || (!w.target && ownershipOf(live, tracking, w.ref).kind !== 'owned')) return undefined;
      return live;
    } catch (err) {
      state.warnings.push(refusal(cluster, err, `read ${describeRef(w.ref)}`));
      return undefined;
    }
  };
  for (let i = 0; i < work.length; i += READ_CONCURRENCY) {
    for (const live of await Promise.all(work.slice(i, i + READ_CONCURRENCY).map(readOne)))
      if (live && add(state, live, [], assess)) managed.push(live);
  }
  let frontier = managed;
  for (let depth = 0; depth < MAX_TREE_DEPTH && frontier.length > 0 && !state.truncated; depth++)
    frontier = await ownedLevel(cluster, frontier, state, assess);
  const tree: apiv1.ApplicationTree = {
    nodes: state.nodes,
    orphanedNodes: [],
    truncated: state.truncated,
    warnings: state.warnings,
  };
  return { tree, cluster };
}

/** Adds a node unless it is there already or the limit is reached (then the tree is truncated). */
function add(
  state: TreeState,
  o: LiveObject,
  parents: apiv1.ResourceRef[],
  assess: (o: LiveObject) => ReturnType<HealthAssessor['assess']>,
): boolean {
  const key = o.metadata?.uid || `${o.apiVersion}/${o.kind}/${o.metadata?.namespace}/${o.metadata?.name}`;
  if (state.seen.has(key)) return false;
  if (state.nodes.length >= MAX_TREE_NODES) {
    state.truncated = true;
    return false;
  }
  state.seen.add(key);
  state.nodes.push(nodeOf(o, parents, assess(o)));
  return true;
}

/** One level down: each child kind listed once per namespace of its parents; the owned ones added. */
async function ownedLevel(
  cluster: TargetCluster,
  parents: readonly LiveObject[],
  state: TreeState,
  assess: (o: LiveObject) => ReturnType<HealthAssessor['assess']>,
): Promise<LiveObject[]> {
  const groups = new Map<string, { namespace: string; child: ChildKind; parents: LiveObject[] }>();
  for (const p of parents) {
    const namespace = p.metadata?.namespace ?? '';
    for (const child of childKindsOf(p.apiVersion ?? '', p.kind ?? '')) {
      const key = `${namespace}/${child.apiVersion}/${child.kind}`;
      const g = groups.get(key) ?? { namespace, child, parents: [] };
      g.parents.push(p);
      groups.set(key, g);
    }
  }
  const next: LiveObject[] = [];
  for (const g of groups.values()) {
    const items = await listChildren(cluster, g.child, g.namespace, state);
    for (const { object, parents: owners } of ownedBy(g.parents, items))
      if (add(state, object, owners, assess)) next.push(object);
  }
  return next;
}

async function listChildren(
  cluster: TargetCluster,
  child: ChildKind,
  namespace: string,
  state: TreeState,
): Promise<LiveObject[]> {
  try {
    const page = await cluster.list(child.apiVersion, child.kind, namespace, { limit: MAX_TREE_NODES });
    if (page.more) state.truncated = true;
    // A list's items carry no apiVersion and kind (the list has them): give each its own.
    return (plain(page.items) as LiveObject[]).map((o) => ({
      ...o,
      apiVersion: child.apiVersion,
      kind: child.kind,
    }));
  } catch (err) {
    // A kind the cluster does not serve (no EndpointSlices on an old cluster) has nothing to show.
    if (httpStatusOf(err) === 404) return [];
    state.warnings.push(refusal(cluster, err, `list ${child.kind}s in namespace ${namespace || '(all)'}`));
    return [];
  }
}

/** A 4xx from the API server as a sentence; anything else (unreachable, 5xx) is thrown. */
function refusal(cluster: TargetCluster, err: unknown, what: string): string {
  const status = httpStatusOf(err);
  if (status === undefined || status >= 500) throw err;
  const who = status === 403 ? `${cluster.identityName} may not ${what}` : `${what} failed (${status})`;
  return `${who}: ${kubeMessageOf(err)}`;
}

/** The client's typed objects (Dates, class instances) as the plain JSON the API server sent. */
const plain = (items: unknown[]): unknown[] => JSON.parse(JSON.stringify(items)) as unknown[];

export interface ResourceEventsQuery {
  resourceNamespace: string;
  resourceName: string;
  resourceUid: string;
}

/**
 * Argo CD's ListResourceEvents for one object of the tree (matched by uid, name and namespace, as
 * Argo CD does), listed as the Application's identity; a refusal is the answer's `error`.
 */
export async function resourceEvents(
  deps: ResourceTreeDeps,
  app: { namespace: string; name: string },
  q: ResourceEventsQuery,
): Promise<apiv1.EventList> {
  const { tree, cluster } = await treeAndCluster(deps, app);
  const found = tree.nodes.some(
    (n) => n.uid === q.resourceUid && n.name === q.resourceName && n.namespace === q.resourceNamespace,
  );
  if (!found)
    throw new InvalidArgumentError(`${q.resourceName} not found as part of application ${app.name}`);
  const fieldSelector = [
    `involvedObject.name=${q.resourceName}`,
    `involvedObject.uid=${q.resourceUid}`,
    `involvedObject.namespace=${q.resourceNamespace}`,
  ].join(',');
  try {
    const page = await cluster.list('v1', 'Event', q.resourceNamespace, { limit: MAX_EVENTS, fieldSelector });
    return { items: (plain(page.items) as KubeEvent[]).map(eventView), error: '' };
  } catch (err) {
    return {
      items: [],
      error: refusal(cluster, err, `list events in namespace ${q.resourceNamespace || '(all)'}`),
    };
  }
}

interface KubeEvent {
  metadata?: { name?: string; namespace?: string; uid?: string; creationTimestamp?: string };
  involvedObject?: Partial<
    Record<'kind' | 'namespace' | 'name' | 'uid' | 'apiVersion' | 'fieldPath', string>
  >;
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  count?: number;
  type?: string;
  reportingComponent?: string;
}

function eventView(e: KubeEvent): apiv1.Event {
  const io = e.involvedObject ?? {};
  return {
    metadata: {
      name: e.metadata?.name ?? '',
      namespace: e.metadata?.namespace ?? '',
      uid: e.metadata?.uid ?? '',
      creationTimestamp: e.metadata?.creationTimestamp ?? '',
    },
    involvedObject: {
      kind: io.kind ?? '',
      namespace: io.namespace ?? '',
      name: io.name ?? '',
      uid: io.uid ?? '',
      apiVersion: io.apiVersion ?? '',
      fieldPath: io.fieldPath ?? '',
    },
    reason: e.reason ?? '',
    message: e.message ?? '',
    source: { component: e.source?.component ?? '', host: e.source?.host ?? '' },
    firstTimestamp: e.firstTimestamp ?? e.eventTime ?? '',
    lastTimestamp: e.lastTimestamp ?? e.eventTime ?? '',
    count: e.count ?? 1,
    type: e.type ?? '',
    reportingComponent: e.reportingComponent ?? '',
  };
}
