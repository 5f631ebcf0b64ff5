// The list's rows, virtualised: only the rows in view (and a few more) are in the document, so
// 10,000 Applications scroll as smoothly as ten.
import { useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { Link } from 'wouter';
import { clusterOf, healthOf, namespaceOf, projectOf, syncOf, type Application } from '../api/views';
import { HealthBadge, SyncBadge } from './Badges';

const ROW_HEIGHT = 44;

export function ApplicationRows({ apps }: { apps: Application[] }) {
  const parent = useRef<HTMLDivElement>(null);
  const rows = useVirtualizer({
    count: apps.length,
    getScrollElement: () => parent.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
    // jsdom and the first paint have no layout: start with a screenful.
    initialRect: { width: 1000, height: 800 },
  });
  return (
    <div ref={parent} className="rows" role="region" aria-label="applications" tabIndex={0}>
      <ul style={{ height: rows.getTotalSize() }} className="rows-inner">
        {rows.getVirtualItems().map((v) => {
          const a = apps[v.index]!;
          const ns = a.metadata.namespace ?? 'capstan';
          return (
            <li
              key={`${ns}/${a.metadata.name}`}
              className="row"
              style={{ transform: `translateY(${v.start}px)`, height: ROW_HEIGHT }}
            >
              <Link href={`/applications/${ns}/${a.metadata.name}`} className="row-name">
                {a.metadata.name}
              </Link>
              <span className="row-project">{projectOf(a)}</span>
              <SyncBadge status={syncOf(a)} />
              <HealthBadge status={healthOf(a)} />
              <span className="row-dest" title={clusterOf(a)}>
                {clusterOf(a)} / {namespaceOf(a)}
              </span>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
