// The resource tree as graph nodes and edges (Application -> managed objects), laid out by dagre
// (left to right). Plain functions: tested without a browser.
import dagre from '@dagrejs/dagre';
import type { Application, ResourceStatus } from '../api/views';

export const NODE_WIDTH = 240;
export const NODE_HEIGHT = 64;

export type TreeNode = {
  id: string;
  kind: string;
  name: string;
  namespace?: string;
  group?: string;
  sync?: string;
  health?: string;
  resource?: ResourceStatus;
  x: number;
  y: number;
};

export const resourceId = (r: ResourceStatus) => `${r.group ?? ''}/${r.kind}/${r.namespace ?? ''}/${r.name}`;

export function treeOf(app: Application): {
  nodes: TreeNode[];
  edges: { id: string; source: string; target: string }[];
} {
  const root = `app/${app.metadata.name}`;
  const resources = app.status?.resources ?? [];
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 16, ranksep: 80 });
  g.setDefaultEdgeLabel(() => ({}));
  g.setNode(root, { width: NODE_WIDTH, height: NODE_HEIGHT });
  const edges = resources.map((r) => {
    const id = resourceId(r);
    g.setNode(id, { width: NODE_WIDTH, height: NODE_HEIGHT });
    g.setEdge(root, id);
    return { id: `${root}->${id}`, source: root, target: id };
  });
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
    ...resources.map((r) => ({
      id: resourceId(r),
      kind: r.kind,
      name: r.name,
      namespace: r.namespace,
      group: r.group,
      sync: r.status,
      health: r.health?.status,
      resource: r,
      ...at(resourceId(r)),
    })),
  ];
  return { nodes, edges };
}
