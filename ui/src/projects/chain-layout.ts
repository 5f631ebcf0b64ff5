// The parent chain as graph nodes and edges (this project → its parent → … → the root), laid out by
// dagre top to bottom with the root on top, so a child sits below what bounds it. Plain functions.
import dagre from '@dagrejs/dagre';
import type { Link } from './chain';

export const CHAIN_NODE_WIDTH = 320;
export const CHAIN_NODE_HEIGHT = 150;

export type ChainNode = { id: string; link: Link; current: boolean; x: number; y: number };
export type ChainEdge = { id: string; source: string; target: string };

export function chainLayout(links: readonly Link[]): { nodes: ChainNode[]; edges: ChainEdge[] } {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'BT', ranksep: 60, nodesep: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const l of links) g.setNode(l.name, { width: CHAIN_NODE_WIDTH, height: CHAIN_NODE_HEIGHT });
  const edges: ChainEdge[] = [];
  for (let i = 0; i + 1 < links.length; i++) {
    const child = links[i]!.name;
    const parent = links[i + 1]!.name;
    g.setEdge(child, parent);
    edges.push({ id: `${child}->${parent}`, source: child, target: parent });
  }
  dagre.layout(g);
  const nodes = links.map((link, i) => {
    const n = g.node(link.name);
    return {
      id: link.name,
      link,
      current: i === 0,
      x: n.x - CHAIN_NODE_WIDTH / 2,
      y: n.y - CHAIN_NODE_HEIGHT / 2,
    };
  });
  return { nodes, edges };
}
