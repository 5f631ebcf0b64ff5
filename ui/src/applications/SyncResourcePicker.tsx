// Argo CD's selective sync in the sync panel: every resource of the Application, all ticked to
// start with (a full sync); untick some and only the ticked ones are synced (the request's
// `resources`), prune limited to them and hooks not run, as in Argo CD.
import type { ResourceStatus } from '../api/views';
import { resourceId } from './graph-layout';

export interface SyncResource {
  group: string;
  kind: string;
  name: string;
  namespace: string;
}

/** The request's resources: none when everything is ticked (a full sync). */
export function selectedForSync(
  resources: readonly ResourceStatus[],
  ticked: ReadonlySet<string>,
): SyncResource[] {
  if (resources.every((r) => ticked.has(resourceId(r)))) return [];
  return resources
    .filter((r) => ticked.has(resourceId(r)))
    .map((r) => ({ group: r.group ?? '', kind: r.kind, name: r.name, namespace: r.namespace ?? '' }));
}

export function SyncResourcePicker(props: {
  resources: readonly ResourceStatus[];
  ticked: ReadonlySet<string>;
  onChange: (ticked: Set<string>) => void;
}) {
  const { resources, ticked } = props;
  if (resources.length === 0) return null;
  const all = () => props.onChange(new Set(resources.map(resourceId)));
  const toggle = (id: string, on: boolean) => {
    const next = new Set(ticked);
    if (on) next.add(id);
    else next.delete(id);
    props.onChange(next);
  };
  const partial = resources.some((r) => !ticked.has(resourceId(r)));
  return (
    <fieldset className="resources">
      <legend>Resources</legend>
      <p className="actions">
        <button type="button" className="button ghost" onClick={all}>
          All
        </button>
        <button type="button" className="button ghost" onClick={() => props.onChange(new Set())}>
          None
        </button>
      </p>
      <ul className="resource-picks">
        {resources.map((r) => {
          const id = resourceId(r);
          return (
            <li key={id}>
              <label className="check">
                <input
                  type="checkbox"
                  checked={ticked.has(id)}
                  onChange={(e) => toggle(id, e.target.checked)}
                />{' '}
                {r.kind} {r.namespace ? `${r.namespace}/` : ''}
                {r.name}
              </label>
            </li>
          );
        })}
      </ul>
      {partial && (
        <p className="muted" role="note">
          Selective sync: only the ticked resources are synced and pruned; hooks do not run, and the sync is
          not added to the history.
        </p>
      )}
    </fieldset>
  );
}
