// The resource tree drawn by React Flow from the dagre layout; each node is a button (keyboard:
// Tab to it, Enter to open its panel) with its health and sync badges. The managed objects come
// with the Application (status.resources); the objects they own from the api's resource-tree, asked
// again when the Application's state changes (a reconcile, an operation's end) as the stream tells,
// never on a timer.
import { ReactFlow, Background, Controls, Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import type { Application } from '../api/views';
import type { ApplicationTree } from '../api/live-views';
import { treeOf, type PanelTarget, type TreeNode } from './graph-layout';
import { HealthBadge, SyncBadge } from './Badges';

type Data = TreeNode & { onOpen?: (r: PanelTarget) => void };

/** The live tree, fetched again when the Application's reconcile or operation moves on. */
export function useResourceTree(app: Application) {
  const { name, namespace = '' } = app.metadata;
  const op = app.status?.operationState;
  return useQuery({
    queryKey: ['tree', namespace, name, app.status?.reconciledAt, op?.phase, op?.finishedAt],
    placeholderData: (previous) => previous,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/applications/{applicationName}/resource-tree', {
          params: { path: { applicationName: name }, query: { appNamespace: namespace } },
        }),
      ) as ApplicationTree,
  });
}

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
  onOpen: (r: PanelTarget) => void;
}) {
  const live = useResourceTree(app);
  const { nodes, edges } = useMemo(() => {
    const t = treeOf(app, live.data);
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
  }, [app, live.data, onOpen]);
  return (
    <>
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
      <TreeNotes tree={live.data} error={live.error} />
    </>
  );
}

/** What the live tree could not show: a refused list, the node limit, or the api's error. */
function TreeNotes({ tree, error }: { tree: ApplicationTree | undefined; error: Error | null }) {
  const notes = [
    ...(error ? [`Owned objects are not shown: ${error.message}`] : []),
    ...(tree?.warnings ?? []),
    ...(tree?.truncated ? ['The tree is cut short at its node limit.'] : []),
  ];
  if (notes.length === 0) return null;
  return (
    <ul className="notes" aria-label="resource tree notes">
      {notes.map((n) => (
        <li key={n} className="muted">
          {n}
        </li>
      ))}
    </ul>
  );
}
