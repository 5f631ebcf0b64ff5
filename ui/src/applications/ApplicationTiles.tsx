// The Applications as tiles, virtualised like the rows: the tiles are laid out in rows of as many
// as the width holds, and only the rows of tiles in view (and a few more) are in the document.
import { useEffect, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { Link } from 'wouter';
import { clusterOf, healthOf, namespaceOf, projectOf, syncOf, type Application } from '../api/views';
import { HealthBadge, SyncBadge } from './Badges';

const TILE_WIDTH = 280;
const GAP = 12;
const TILE_ROW_HEIGHT = 148;

export const columnsFor = (width: number) => Math.max(1, Math.floor((width + GAP) / (TILE_WIDTH + GAP)));

function useWidth(el: React.RefObject<HTMLDivElement | null>): number {
  const [width, setWidth] = useState(1000);
  useEffect(() => {
    const node = el.current;
    if (!node) return;
    setWidth(node.clientWidth || 1000);
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => setWidth(node.clientWidth || 1000));
    observer.observe(node);
    return () => observer.disconnect();
  }, [el]);
  return width;
}

export function ApplicationTiles({ apps }: { apps: Application[] }) {
  const parent = useRef<HTMLDivElement>(null);
  const columns = columnsFor(useWidth(parent));
  const rows = useVirtualizer({
    count: Math.ceil(apps.length / columns),
    getScrollElement: () => parent.current,
    estimateSize: () => TILE_ROW_HEIGHT,
    overscan: 4,
    initialRect: { width: 1000, height: 800 },
  });
  return (
    <div ref={parent} className="rows tiles" role="region" aria-label="applications" tabIndex={0}>
      <ul style={{ height: rows.getTotalSize() }} className="rows-inner">
        {rows
          .getVirtualItems()
          .flatMap((v) =>
            apps
              .slice(v.index * columns, (v.index + 1) * columns)
              .map((a, i) => (
                <Tile
                  key={`${a.metadata.namespace ?? 'capstan'}/${a.metadata.name}`}
                  app={a}
                  top={v.start}
                  column={i}
                />
              )),
          )}
      </ul>
    </div>
  );
}

function Tile({ app: a, top, column }: { app: Application; top: number; column: number }) {
  const ns = a.metadata.namespace ?? 'capstan';
  return (
    <li
      className="tile"
      style={{
        transform: `translate(${column * (TILE_WIDTH + GAP)}px, ${top}px)`,
        width: TILE_WIDTH,
        height: TILE_ROW_HEIGHT - GAP,
      }}
    >
      <Link href={`/applications/${ns}/${a.metadata.name}`} className="tile-name">
        {a.metadata.name}
      </Link>
      <span className="node-badges">
        <SyncBadge status={syncOf(a)} />
        <HealthBadge status={healthOf(a)} />
      </span>
      <dl className="facts compact">
        <dt>Project</dt>
        <dd>{projectOf(a)}</dd>
        <dt>Destination</dt>
        <dd className="mono" title={clusterOf(a)}>
          {clusterOf(a)} / {namespaceOf(a)}
        </dd>
        <dt>Source</dt>
        <dd className="mono" title={a.spec.source?.repoURL}>
          {a.spec.source?.path || a.spec.source?.chart || a.spec.source?.repoURL || '—'}
        </dd>
      </dl>
    </li>
  );
}
