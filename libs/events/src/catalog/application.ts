// Application events, written by the api (the owner), carrying the whole Argo CD manifest as stored.
import { z } from 'zod';
import { defineEvent } from './define.js';
import { argoObjectSchema } from './project.js';

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

export const applicationDeleted = defineEvent({
  type: 'io.capstan.application.deleted.v1',
  description: 'an Application was deleted; cascade asks for its resources to be deleted too',
  data: z.object({ name: z.string(), namespace: z.string(), project: z.string(), cascade: z.boolean() }),
});

export const applicationEvents = [applicationCreated, applicationUpdated, applicationDeleted] as const;
