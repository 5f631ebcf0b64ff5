// Creating and updating ApplicationSets (`appset create`, `appset apply`): each set of the files in
// order, and what happened to it, decided as argocd decides it: the set is read before the write
// (absent: created; the written set's spec, labels and annotations equal to the earlier ones:
// unchanged; otherwise updated). A failure stops at that set and names its file and document; the
// server's refusal (each refused Application and why) is its message and field violations, shown in
// full by the one error path (describeError).
import { status } from '@grpc/grpc-js';
import type { apiv1 } from '@capstan/proto';
import { canonicalJson } from '@capstan/policy';
import type { Connection } from '../client/connection.js';
import { inContext } from '../errors.js';
import { documentName } from '../input/manifest-files.js';
import type { ApplicationSetDocument } from './appset-manifests.js';

export type WriteAction = 'created' | 'updated' | 'unchanged';

export interface Written {
  readonly applicationSet: apiv1.ApplicationSet;
  readonly action: WriteAction;
}

const content = (s: apiv1.ApplicationSet) =>
  canonicalJson({
    spec: s.spec ?? {},
    labels: s.metadata?.labels ?? {},
    annotations: s.metadata?.annotations ?? {},
  });

/** argocd's hasAppSetChanged: without upsert nothing was changed; with it, compare before and after. */
export function writeAction(
  before: apiv1.ApplicationSet | undefined,
  after: apiv1.ApplicationSet,
  upsert: boolean,
): WriteAction {
  if (!before) return 'created';
  if (!upsert || content(before) === content(after)) return 'unchanged';
  return 'updated';
}

async function existing(c: Connection, s: apiv1.ApplicationSet): Promise<apiv1.ApplicationSet | undefined> {
  try {
    return await c.call(c.applicationSets.get.bind(c.applicationSets), {
      name: s.metadata?.name ?? '',
      appsetNamespace: s.metadata?.namespace ?? '',
    });
  } catch (err) {
    if ((err as { code?: number }).code === status.NOT_FOUND) return undefined;
    throw err;
  }
}

/** Creates (or with upsert updates) one set; errors are prefixed with its file, document and name. */
export async function writeApplicationSet(
  c: Connection,
  d: ApplicationSetDocument,
  opts: { upsert: boolean; dryRun: boolean },
): Promise<Written> {
  try {
    const before = await existing(c, d.applicationSet);
    const applicationSet = await c.call(c.applicationSets.create.bind(c.applicationSets), {
      applicationset: d.applicationSet,
      upsert: opts.upsert,
      dryRun: opts.dryRun,
    });
    return { applicationSet, action: writeAction(before, applicationSet, opts.upsert) };
  } catch (err) {
    throw inContext(`${documentName(d)}: ApplicationSet ${d.qualifiedName}`, err);
  }
}
