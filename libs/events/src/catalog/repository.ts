// Repository events. Other systems announce pushes (`capstan.ext.git.push`); the repo service (the
// owner of repository state) announces when a watched source now resolves to a new commit, which
// triggers automated syncs. Never any credential: only URLs (without userinfo), refs and SHAs.
import { z } from 'zod';
import { defineEvent } from './define.js';

const sha = z.string().regex(/^[0-9a-f]{40}$/, 'must be a full lowercase commit SHA');
/** A repository URL as Capstan stores it: http(s), ssh or scp-like, never with a password inside. */
const repoUrl = z
  .string()
  .min(1)
  .max(2048)
  .refine((u) => !/^[a-z][a-z0-9+.-]*:\/\/[^/@]*:[^/@]*@/i.test(u), 'must not carry credentials');

export const gitPush = defineEvent({
  type: 'io.capstan.ext.git.push.v1',
  description:
    'a push happened to a git repository (published by a git server, CI or webhook bridge; subject: the repository URL); the repo service re-checks every source it watches on that URL at once',
  data: z.object({
    repoURL: repoUrl,
    /** The updated ref, e.g. refs/heads/main; absent means "something changed, re-check all". */
    ref: z.string().min(1).max(1024).optional(),
    before: sha.optional(),
    after: sha.optional(),
    /**
     * The target revisions (as Applications write them) this push may move, when the publisher knows
     * (the api's git webhook matched them as Argo CD does); absent means every source on the URL.
     */
    revisions: z.array(z.string().max(255)).max(100).optional(),
  }),
});

export const repositoryRevisionChanged = defineEvent({
  type: 'io.capstan.repository.revision-changed.v1',
  description:
    'a watched source (repository URL, target revision, project) now resolves to a new commit; subject repository-watches/<id>',
  data: z.object({
    repoURL: repoUrl,
    /** The target revision as Applications name it (branch, tag, HEAD, SHA). */
    revision: z.string().max(255),
    /** The project whose credential the resolution used ('' for anonymous/unscoped lookups). */
    project: z.string().max(253),
    sha,
    previousSha: sha.nullable(),
    /** What noticed the change. */
    detectedBy: z.enum(['poll', 'push']),
  }),
});

export const repositoryEvents = [gitPush, repositoryRevisionChanged] as const;
