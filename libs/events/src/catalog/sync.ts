// Sync commands and events. Only the api publishes the request (bus permissions enforce it), after
// its RBAC check of the caller, so the request's `actor` is the authenticated one; other systems ask
// for a sync with io.capstan.ext.sync.request.v1, which the api checks as their Capstan account. The
// objects always come from the Application's source (the repo service): a request carries none.
// The sync service owns everything that follows: started, one resource-synced per resource
// operation, and exactly one terminal succeeded or failed per operationId.
import { z } from 'zod';
import { defineEvent } from './define.js';

const applicationRef = z.object({ name: z.string().min(1), namespace: z.string().min(1) });
/** Argo CD's revisions of a multi-source Application: one per source, in spec.sources order. */
const revisionList = z.array(z.string().max(255)).max(100);

/** How many resources one selective sync may name (a request is bounded like every tenant input). */
export const MAX_SYNC_RESOURCES = 500;

/** Argo CD's SyncOperationResource: group, kind and name match exactly; namespace '' matches any. */
export const syncResource = z.strictObject({
  group: z.string().max(253),
  kind: z.string().min(1).max(63),
  name: z.string().min(1).max(253),
  namespace: z.string().max(63),
});

/**
 * What started a sync, as `capstan app history` shows it: a user (through the api), another system
 * (an ext sync request, authorised as its account), automation (a new revision or a new Application),
 * self-heal (drift), a retry of a failed sync (syncPolicy.retry) or a rollback. `actor` is the
 * principal for user/bus/rollback and `automation` otherwise.
 */
export const syncTrigger = z.object({
  kind: z.enum(['user', 'bus', 'automated', 'self-heal', 'retry', 'rollback']),
  actor: z.string(),
});

export const syncRequest = defineEvent({
  type: 'io.capstan.cmd.sync.request.v1',
  description: 'please sync this Application (subject applications/<namespace>/<name>)',
  // Strict: a field this schema does not know (such as the inline `manifests` of old) is refused.
  data: z.strictObject({
    /** Chosen by the requester; the sync's lifecycle events carry it, so the requester can follow it. */
    operationId: z.string().min(1).max(128),
    application: applicationRef,
    project: z.string().min(1).optional(),
    /** Empty: the Application's targetRevision. */
    revision: z.string().optional(),
    /** A multi-source Application's: one revision per source, in spec.sources order (a rollback's). */
    revisions: revisionList.optional(),
    dryRun: z.boolean().default(false),
    prune: z.boolean().default(false),
    /**
     * Argo CD's selective sync: only these resources are applied, prune deletes only those of them
     * git no longer declares, and hooks do not run. Absent: every resource.
     */
    resources: z.array(syncResource).min(1).max(MAX_SYNC_RESOURCES).optional(),
    /** Who asked (user, bus, rollback); absent: a user, the envelope's actor. */
    trigger: syncTrigger.optional(),
  }),
});

/**
 * Another system asks for a sync, on `<ns>.ext.<source>.sync.request`. Its bus user may publish only
 * below its own source token; the api maps the source to a Capstan account (setting
 * `bus.ext-accounts`), authorises the sync as that account with the same RBAC as `capstan app sync`,
 * audits the decision, and only then publishes the command. The envelope's `actor` is ignored.
 */
export const extSyncRequest = defineEvent({
  type: 'io.capstan.ext.sync.request.v1',
  bySource: true,
  description:
    'another system asks for a sync of an Application (subject ext.<source>.sync.request); authorised as the Capstan account mapped to <source>',
  data: z.strictObject({
    application: z.strictObject({
      name: z.string().min(1).max(253),
      namespace: z.string().max(253).optional(),
    }),
    revision: z.string().max(255).optional(),
    dryRun: z.boolean().default(false),
    prune: z.boolean().default(false),
  }),
});

export const syncCommands = [syncRequest, extSyncRequest] as const;

/** Who a sync writes as: the impersonated ServiceAccount, or the control-plane credentials (username null). */
const identity = z.object({ impersonation: z.boolean(), username: z.string().nullable() });

export const syncStarted = defineEvent({
  type: 'io.capstan.sync.started.v1',
  description: 'a sync operation started (subject applications/<namespace>/<name>)',
  data: z.object({
    operationId: z.string(),
    application: applicationRef,
    dryRun: z.boolean(),
    attempt: z.number().int().positive(),
    /** Absent on events from before triggers were recorded. */
    trigger: syncTrigger.optional(),
    /** The revision the operation syncs to, when known at start (a rollback's, a pinned request's). */
    revision: z.string().optional(),
    /** A multi-source Application's: one revision per source. */
    revisions: revisionList.optional(),
  }),
});

export const syncResourceSynced = defineEvent({
  type: 'io.capstan.sync.resource-synced.v1',
  description: 'one resource operation of a sync (apply, prune, hook), with the identity it ran as',
  data: z.object({
    operationId: z.string(),
    application: applicationRef,
    verb: z.string(),
    group: z.string(),
    kind: z.string(),
    namespace: z.string().nullable(),
    name: z.string(),
    /** Synced, SyncFailed, Pruned, PruneFailed, HookSucceeded, HookFailed, DryRun. */
    status: z.string(),
    httpStatus: z.number().int().nullable(),
    message: z.string(),
    identity,
    /** The operation's attempt that did it (absent on events from before attempts were told apart). */
    attempt: z.number().int().positive().optional(),
  }),
});

export const syncSucceeded = defineEvent({
  type: 'io.capstan.sync.succeeded.v1',
  description: 'terminal: the sync operation succeeded',
  data: z.object({
    operationId: z.string(),
    application: applicationRef,
    revision: z.string().nullable(),
    /** A multi-source Application's: the revision of each source (revision is the first's). */
    revisions: revisionList.optional(),
    dryRun: z.boolean(),
    identity,
    resources: z.number().int(),
    pruned: z.number().int(),
  }),
});

export const syncFailed = defineEvent({
  type: 'io.capstan.sync.failed.v1',
  description: 'terminal: the sync operation failed or was refused; reason says why',
  data: z.object({
    operationId: z.string(),
    application: applicationRef,
    /** decision (refused before touching the cluster), apply, hook, prune or infrastructure. */
    phase: z.enum(['decision', 'apply', 'hook', 'prune', 'infrastructure']),
    reason: z.string(),
    identity: identity.nullable(),
  }),
});

export const syncImpersonationIgnored = defineEvent({
  type: 'io.capstan.sync.impersonation-ignored.v1',
  description:
    'warning: impersonation is off, so the destinationServiceAccounts of these projects were ignored',
  data: z.object({
    operationId: z.string(),
    application: applicationRef,
    projects: z.array(z.object({ name: z.string(), rules: z.number().int() })),
  }),
});

/**
 * One attempt of a cascade deletion failed (a refusal, an unreachable cluster); the deletion is
 * retried with backoff and the api shows the reason as the Application's DeletionError condition.
 */
export const syncDeletionFailed = defineEvent({
  type: 'io.capstan.sync.deletion-failed.v1',
  description:
    'an attempt to delete the resources of an Application being deleted failed; it is retried after retryInMs (subject applications/<namespace>/<name>)',
  data: z.object({
    operationId: z.string(),
    application: applicationRef,
    reason: z.string(),
    identity: identity.nullable(),
    attempt: z.number().int().positive(),
    retryInMs: z.number().int().nonnegative(),
  }),
});

/** Terminal: every object the Application owned is gone; the api now removes the Application. */
export const syncDeletionSucceeded = defineEvent({
  type: 'io.capstan.sync.deletion-succeeded.v1',
  description:
    'terminal: every resource an Application being deleted owned is gone (deleted as its ServiceAccount, or left because another Application tracks it)',
  data: z.object({
    operationId: z.string(),
    application: applicationRef,
    identity,
    deleted: z.number().int().nonnegative(),
    /** Recorded objects that were left: tracked by another Application or by none. */
    skipped: z.number().int().nonnegative(),
  }),
});

const healthStatus = z.object({
  status: z.enum(['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown']),
  message: z.string().optional(),
});

/**
 * The reconciler's verdict on an Application changed: its sync status (live vs git at the resolved
 * revision, read as the project's ServiceAccount), its health, or a resource's. Published only on a
 * change, so other systems (notifications) can react to every transition. Subject
 * applications/<namespace>/<name>; the sync service owns it.
 */
export const syncStatusChanged = defineEvent({
  type: 'io.capstan.sync.status-changed.v1',
  description:
    "an Application's live status changed: sync status (Synced, OutOfSync, Unknown), health, or a resource's status",
  data: z.object({
    application: applicationRef,
    sync: z.object({
      status: z.enum(['Synced', 'OutOfSync', 'Unknown']),
      /** The revision git was compared at (commit SHA), when it resolved. */
      revision: z.string().optional(),
      /** A multi-source Application's: the revision of each source (revision is the first's). */
      revisions: revisionList.optional(),
    }),
    health: healthStatus,
    /** Why the status is Unknown (a read the ServiceAccount may not do, a manifest that failed). */
    message: z.string().optional(),
    resources: z
      .array(
        z.object({
          group: z.string(),
          version: z.string(),
          kind: z.string(),
          namespace: z.string(),
          name: z.string(),
          status: z.enum(['Synced', 'OutOfSync', 'Unknown']),
          health: healthStatus.optional(),
          /** Live but no longer in git: a prune would delete it. */
          requiresPruning: z.boolean().optional(),
          message: z.string().optional(),
        }),
      )
      .max(10_000),
    /** Argo CD's ExcludedResourceWarning messages: declared objects argocd-cm's resource.exclusions/inclusions leave out. */
    excluded: z.array(z.string()).max(10_000).optional(),
    reconciledAt: z.string(),
    /** What the previous verdict was, so a consumer sees the transition without keeping state. */
    previous: z
      .object({ sync: z.enum(['Synced', 'OutOfSync', 'Unknown']), health: healthStatus.shape.status })
      .optional(),
  }),
});

export const syncEvents = [
  syncStarted,
  syncResourceSynced,
  syncSucceeded,
  syncFailed,
  syncImpersonationIgnored,
  syncDeletionFailed,
  syncDeletionSucceeded,
  syncStatusChanged,
] as const;
