// Application events, written by the api (the owner), carrying the whole Argo CD manifest as stored.
import { z } from 'zod';
import { defineEvent } from './define.js';
import { argoObjectSchema } from './project.js';

/**
 * The subject of every event about one Application (its stream in the api, the CloudEvents
 * `subject` of the sync service's events about it): `applications/<namespace>/<name>`.
 */
export const applicationSubject = (namespace: string, name: string): string =>
  `applications/${namespace}/${name}`;

export const applicationCreated = defineEvent({
  type: 'io.capstan.application.created.v1',
  description: 'an Application was created (subject applications/<namespace>/<name>)',
  data: z.object({ application: argoObjectSchema, uid: z.string() }),
});

export const applicationUpdated = defineEvent({
  type: 'io.capstan.application.updated.v1',
  description: 'an Application changed; application is the whole new manifest',
  data: z.object({ application: argoObjectSchema, changed: z.array(z.string()) }),
});

/**
 * A deletion with cascade began (Argo CD's resources finalizer): the Application stays, marked with
 * metadata.deletionTimestamp and its finalizer, until the sync service has deleted every object it
 * owns (sync.deletion-succeeded); then the api removes it (application.deleted with cascade true).
 */
export const applicationDeletionRequested = defineEvent({
  type: 'io.capstan.application.deletion-requested.v1',
  description:
    'an Application is being deleted with cascade: application is the manifest with metadata.deletionTimestamp and finalizers; its resources are deleted as its ServiceAccount before it is removed',
  data: z.object({
    application: argoObjectSchema,
    /** The deletion's operation id: its progress comes as sync.resource-synced / sync.deletion-* events. */
    operationId: z.string().min(1).max(128),
    /** Kubernetes propagation of each delete: foreground (resources-finalizer.argocd.argoproj.io) or background (…/background). */
    propagationPolicy: z.enum(['foreground', 'background']),
  }),
});

export const applicationDeleted = defineEvent({
  type: 'io.capstan.application.deleted.v1',
  description:
    'an Application was removed; cascade true: after its resources were deleted (deletion-requested first), false: its resources were left in place',
  data: z.object({ name: z.string(), namespace: z.string(), project: z.string(), cascade: z.boolean() }),
});

export const applicationEvents = [
  applicationCreated,
  applicationUpdated,
  applicationDeletionRequested,
  applicationDeleted,
] as const;
