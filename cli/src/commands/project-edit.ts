// The read-modify-write every `proj` editing command does.
import { apiv1 } from '@capstan/proto';
import type { Connection } from '../client/connection.js';

/** get, change, update with the resourceVersion read: a concurrent change is refused, not overwritten. */
export async function modify(
  c: Connection,
  name: string,
  change: (spec: apiv1.ProjectSpec) => void,
): Promise<apiv1.Project> {
  const p = await c.call(c.projects.get.bind(c.projects), { name });
  const spec = p.spec ?? apiv1.ProjectSpec.fromPartial({});
  change(spec);
  return c.call(c.projects.update.bind(c.projects), { project: { ...p, spec } });
}
