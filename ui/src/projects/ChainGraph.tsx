// The parent chain drawn by React Flow from the dagre layout: each link with its own restrictions
// (the api enforces their intersection; a link the caller may not read says why). Loaded lazily
// with the graph library, like the resource tree.
import { ReactFlow, Background, Controls, Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo } from 'react';
import type { Link } from './chain';
import { chainLayout, type ChainNode } from './chain-layout';
import { Restrictions } from './Restrictions';

function LinkNode({ data }: NodeProps<Node<ChainNode>>) {
  const { link, current } = data;
  return (
    <div className={`node chain-node${current ? ' current' : ''}`}>
      <Handle type="target" position={Position.Bottom} />
      <div className="node-button" role="group" aria-label={`project ${link.name}`}>
        <span className="node-kind">
          {current ? 'this project' : link.project && !link.project.spec.parentProject ? 'root' : 'parent'}
        </span>
        <span className="node-name">{link.name}</span>
        {link.error || !link.project ? (
          <span className="error">Not visible to you: {link.error?.message}</span>
        ) : (
          <Restrictions project={link.project} compact />
        )}
      </div>
      <Handle type="source" position={Position.Top} />
    </div>
  );
}

const nodeTypes = { link: LinkNode };

export default function ChainGraph({ links }: { links: Link[] }) {
  const { nodes, edges } = useMemo(() => {
    const t = chainLayout(links);
    return {
      nodes: t.nodes.map<Node<ChainNode>>((n) => ({
        id: n.id,
        type: 'link',
        position: { x: n.x, y: n.y },
        data: n,
        draggable: false,
        selectable: false,
      })),
      edges: t.edges.map((e) => ({ ...e, label: 'bounded by' })),
    };
  }, [links]);
  return (
    <div className="graph chain-graph" role="region" aria-label="parent chain graph">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        fitView
        fitViewOptions={{ maxZoom: 1 }}
        nodesConnectable={false}
        nodesFocusable={false}
        edgesFocusable={false}
        proOptions={{ hideAttribution: true }}
        colorMode="system"
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
