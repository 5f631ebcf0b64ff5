// The field-level diff of one resource as a table (path, desired, live), for the resource panel:
// <FieldDiffView targetState={m.targetState} liveState={m.normalizedLiveState || m.liveState} />.
import { useMemo } from 'react';
import { fieldDiffOfStates, formatValue, MAX_CHANGES } from './diff';

const OP_LABEL = { changed: 'differs', missing: 'only in git', extra: 'only in the cluster' } as const;

export function FieldDiffView(props: { targetState?: string; liveState?: string; hideExtra?: boolean }) {
  const { changes, truncated } = useMemo(
    () => fieldDiffOfStates(props.targetState, props.liveState),
    [props.targetState, props.liveState],
  );
  const shown = props.hideExtra ? changes.filter((c) => c.op !== 'extra') : changes;
  if (shown.length === 0)
    return <p className="muted">No difference: the live object has git&apos;s fields.</p>;
  return (
    <div className="code field-diff" tabIndex={0} role="region" aria-label="field differences">
      <table className="table">
        <caption className="visually-hidden">fields that differ, desired (git) → live (cluster)</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Desired (git)</th>
            <th scope="col">Live (cluster)</th>
            <th scope="col">Difference</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((c) => (
            <tr key={c.path} className={`op-${c.op}`}>
              <td className="mono">{c.path || '(whole object)'}</td>
              <td className="mono">{formatValue(c.desired)}</td>
              <td className="mono">{formatValue(c.live)}</td>
              <td>{OP_LABEL[c.op]}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {truncated && <p className="muted">Only the first {MAX_CHANGES} differences are shown.</p>}
    </div>
  );
}
