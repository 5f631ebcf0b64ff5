import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { bool, implement, op, str } from '../operation.js';

const repoQuery = z.strictObject({ repo: z.string().min(1, 'required'), project: str });

export const repositoryOperations = implement<apiv1.RepositoryServiceServer>(apiv1.RepositoryServiceService, {
  create: op({
    http: { method: 'POST', path: '/api/v1/repositories' },
    auth: 'user',
    summary: 'add a repository credential, optionally scoped to a project (secrets are never returned)',
    input: z.strictObject({
      repo: z.string().min(1, 'required'),
      project: str,
      type: z.enum(['git', 'helm']).default('git'),
      name: str,
      username: str,
      password: str,
      sshPrivateKey: str,
      insecure: bool,
      upsert: bool,
      enableOci: bool,
      insecureOciForceHttp: bool,
    }),
    request: apiv1.RepoCreateRequest,
    response: apiv1.Repository,
    run: async (s, ctx, i) => {
      const { upsert, ...input } = i;
      return s.repositories.create(ctx, input, upsert);
    },
  }),
  get: op({
    http: { method: 'GET', path: '/api/v1/repositories/:repo' },
    auth: 'user',
    summary: 'get a repository credential by URL (URL-encoded); project chooses between several',
    input: repoQuery,
    request: apiv1.RepoQuery,
    response: apiv1.Repository,
    run: async (s, ctx, i) => s.repositories.get(ctx, i.repo, i.project),
  }),
  list: op({
    http: { method: 'GET', path: '/api/v1/repositories' },
    auth: 'user',
    summary: 'list the repository credentials the caller may get',
    input: z.strictObject({ project: str }),
    request: apiv1.RepoListQuery,
    response: apiv1.RepositoryList,
    run: async (s, ctx, i) => ({ items: await s.repositories.list(ctx, i.project) }),
  }),
  delete: op({
    http: { method: 'DELETE', path: '/api/v1/repositories/:repo' },
    auth: 'user',
    summary: 'delete a repository credential; project chooses between several',
    input: repoQuery,
    request: apiv1.RepoQuery,
    response: apiv1.Empty,
    run: async (s, ctx, i) => {
      await s.repositories.delete(ctx, i.repo, i.project);
      return {};
    },
  }),
});
