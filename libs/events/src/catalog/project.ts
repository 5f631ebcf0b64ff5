// AppProject events, written by the api (the owner). Each carries the whole manifest as stored, so
// consumers (sync, appset) build their read models without asking the api; the manifest shape is
// Argo CD's AppProject, validated by @capstan/policy at write time.
import { z } from 'zod';
import { defineEvent } from './define.js';

/** An Argo CD object as carried in events: the shape is checked loosely here, fully by @capstan/policy. */
export const argoObjectSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().optional() }),
  spec: z.looseObject({}),
});

export const projectCreated = defineEvent({
  type: 'io.capstan.project.created.v1',
  description: 'an AppProject was created (subject projects/<name>)',
  data: z.object({ project: argoObjectSchema, uid: z.string() }),
});

export const projectUpdated = defineEvent({
  type: 'io.capstan.project.updated.v1',
  description:
    'an AppProject changed; project is the whole new manifest, changed the top-level fields that differ',
  data: z.object({ project: argoObjectSchema, changed: z.array(z.string()) }),
});

export const projectDeleted = defineEvent({
  type: 'io.capstan.project.deleted.v1',
  description: 'an AppProject was deleted',
  data: z.object({ name: z.string(), namespace: z.string() }),
});

export const projectEvents = [projectCreated, projectUpdated, projectDeleted] as const;
