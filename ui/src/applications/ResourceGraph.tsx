// The resource tree drawn by React Flow from the dagre layout; each node is a button (keyboard:
// Tab to it, Enter to open its panel) with its health and sync badges.
import { ReactFlow, Background, Controls, Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo } from 'react';
import type { Application, ResourceStatus } from '../api/views';
import { treeOf, type TreeNode } from './graph-layout';
import { HealthBadge, SyncBadge } from './Badges';

type Data = TreeNode & { onOpen?: (r: ResourceStatus) => void };

function ResourceNode({ data }: NodeProps<Node<Data>>) {
  const body = (
    <>
      <span className="node-kind">{data.kind}</span>
      <span className="node-name">{data.name}</span>
      <span className="node-badges">
        {data.health && <HealthBadge status={data.health} />}
        {data.sync && <SyncBadge status={data.sync} />}
      </span>
    </>
  );
  return (
    <div className="node">
      <Handle type="target" position={Position.Left} />
      {data.resource && data.onOpen ? (
        <button
          type="button"
          className="node-button"
          aria-label={`${data.kind} ${data.name}`}
          onClick={() => data.onOpen!(data.resource!)}
        >
          {body}
        </button>
      ) : (
        <div className="node-button">{body}</div>
      )}
      <Handle type="source" position={Position.Right} />
    </div>
  );
}

const nodeTypes = { resource: ResourceNode };

export default function ResourceGraph({
  app,
  onOpen,
}: {
  app: Application;
  onOpen: (r: ResourceStatus) => void;
}) {
  const { nodes, edges } = useMemo(() => {
    const t = treeOf(app);
    return {
      nodes: t.nodes.map<Node<Data>>((n) => ({
        id: n.id,
        type: 'resource',
        position: { x: n.x, y: n.y },
        data: { ...n, onOpen },
        draggable: false,
        selectable: false,
      })),
      edges: t.edges,
    };
  }, [app, onOpen]);
  return (
    <div className="graph" role="region" aria-label="resource tree">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        fitView
        fitViewOptions={{ maxZoom: 1 }}
        nodesConnectable={false}
        // A click handler gives the nodes pointer events (React Flow leaves static nodes without).
        onNodeClick={(_e, n) => n.data.resource && onOpen(n.data.resource)}
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
