// The resource tree as graph nodes and edges (Application -> managed objects -> the objects they
// own, from the api's resource-tree), laid out by dagre (left to right). Plain functions: tested
// without a browser.
import dagre from '@dagrejs/dagre';
import type { Application, ResourceStatus } from '../api/views';
import type { ApplicationTree, ResourceNode, ResourceRef } from '../api/live-views';

export const NODE_WIDTH = 240;
export const NODE_HEIGHT = 64;

/** What a node's panel opens: a managed resource (with its sync status), or an owned object. */
export type PanelTarget = ResourceStatus & { uid?: string; owned?: boolean };

export type TreeNode = {
  id: string;
  kind: string;
  name: string;
  namespace?: string;
  group?: string;
  sync?: string;
  health?: string;
  resource?: PanelTarget;
  x: number;
  y: number;
};

export const resourceId = (r: Pick<ResourceRef, 'group' | 'kind' | 'namespace' | 'name'>) =>
  `${r.group ?? ''}/${r.kind}/${r.namespace ?? ''}/${r.name}`;

type Edge = { id: string; source: string; target: string };

export function treeOf(
  app: Application,
  tree?: ApplicationTree,
): {
  nodes: TreeNode[];
  edges: Edge[];
} {
  const root = `app/${app.metadata.name}`;
  const resources = app.status?.resources ?? [];
  const live = new Map((tree?.nodes ?? []).map((n) => [resourceId(n), n]));
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 16, ranksep: 80 });
  g.setDefaultEdgeLabel(() => ({}));
  g.setNode(root, { width: NODE_WIDTH, height: NODE_HEIGHT });
  const edges: Edge[] = [];
  const link = (source: string, target: string) => {
    g.setEdge(source, target);
    edges.push({ id: `${source}->${target}`, source, target });
  };
  const managed = resources.map((r) => {
    const id = resourceId(r);
    g.setNode(id, { width: NODE_WIDTH, height: NODE_HEIGHT });
    link(root, id);
    return { id, r };
  });
  const owned = ownedNodes(tree, new Set(managed.map((m) => m.id)));
  for (const o of owned) g.setNode(o.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const o of owned) for (const p of o.parents) link(p, o.id);
  dagre.layout(g);
  const at = (id: string) => {
    const n = g.node(id);
    return { x: n.x - NODE_WIDTH / 2, y: n.y - NODE_HEIGHT / 2 };
  };
  const nodes: TreeNode[] = [
    {
      id: root,
      kind: 'Application',
      name: app.metadata.name,
      namespace: app.metadata.namespace,
      sync: app.status?.sync?.status ?? 'Unknown',
      health: app.status?.health?.status ?? 'Unknown',
      ...at(root),
    },
    ...managed.map(({ id, r }) => ({
      id,
      kind: r.kind,
      name: r.name,
      namespace: r.namespace,
      group: r.group,
      sync: r.status,
      health: r.health?.status,
      resource: { ...r, uid: live.get(id)?.uid },
      ...at(id),
    })),
    ...owned.map(({ id, n }) => ({
      id,
      kind: n.kind,
      name: n.name,
      namespace: n.namespace,
      group: n.group,
      health: n.health?.status,
      resource: { ...n, health: n.health, owned: true },
      ...at(id),
    })),
  ];
  return { nodes, edges };
}

/** The tree's owned objects whose owners are drawn (managed ones, or owned ones reached from them). */
function ownedNodes(tree: ApplicationTree | undefined, drawn: Set<string>) {
  const pending = (tree?.nodes ?? []).filter((n) => (n.parentRefs ?? []).length > 0);
  const out: { id: string; n: ResourceNode; parents: string[] }[] = [];
  // Parents come before their children in the api's answer, but do not rely on it: repeat until stable.
  for (let changed = true; changed;) {
    changed = false;
    for (const n of [...pending]) {
      const parents = (n.parentRefs ?? []).map(resourceId).filter((p) => drawn.has(p));
      if (parents.length === 0) continue;
      const id = resourceId(n);
      pending.splice(pending.indexOf(n), 1);
      if (drawn.has(id)) continue;
      drawn.add(id);
      out.push({ id, n, parents });
      changed = true;
    }
  }
  return out;
}
