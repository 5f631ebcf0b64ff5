// ApplicationSet events, written by the appset service (the owner). Set events carry the manifest as
// the user wrote it (an ApplicationSet holds no credential: repositories and clusters are named by
// URL, their secrets stay with repo and api); status events carry Argo CD's conditions and the
// Applications the set owns. Subject: applicationsets/<namespace>/<name>.
import { z } from 'zod';
import { defineEvent } from './define.js';
import { argoObjectSchema } from './project.js';

export const applicationSetCondition = z.object({
  /** ErrorOccurred, ParametersGenerated, ResourcesUpToDate (Argo CD's condition types). */
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: z.string(),
});

/** One Application the set generated and owns (Argo CD's status.resources entry, without health). */
export const applicationSetResource = z.object({
  group: z.string(),
  version: z.string(),
  kind: z.string(),
  name: z.string(),
  namespace: z.string(),
  project: z.string(),
});

export const applicationSetCreated = defineEvent({
  type: 'io.capstan.applicationset.created.v1',
  description: 'an ApplicationSet was created (subject applicationsets/<namespace>/<name>)',
  data: z.object({ applicationSet: argoObjectSchema, uid: z.string() }),
});

export const applicationSetUpdated = defineEvent({
  type: 'io.capstan.applicationset.updated.v1',
  description:
    'an ApplicationSet changed; applicationSet is the whole new manifest, changed the top-level fields that differ',
  data: z.object({ applicationSet: argoObjectSchema, changed: z.array(z.string()) }),
});

export const applicationSetDeleted = defineEvent({
  type: 'io.capstan.applicationset.deleted.v1',
  description:
    'an ApplicationSet was deleted; its Applications were deleted with it unless preserveResources (their cluster objects are then kept)',
  data: z.object({ name: z.string(), namespace: z.string(), preserveResources: z.boolean() }),
});

export const applicationSetStatusChanged = defineEvent({
  type: 'io.capstan.applicationset.status-changed.v1',
  description:
    "an ApplicationSet's status changed: Argo CD's conditions, the Applications it owns, and the digest of what it last generated",
  data: z.object({
    conditions: z.array(applicationSetCondition),
    resources: z.array(applicationSetResource),
    /** sha256 of the generated Applications last applied ('' when none were): a reconcile that
     * generates the same writes nothing. */
    appliedDigest: z.string(),
  }),
});

export const applicationSetEvents = [
  applicationSetCreated,
  applicationSetUpdated,
  applicationSetDeleted,
  applicationSetStatusChanged,
] as const;
