import { z } from 'zod';
import { apiv1 } from '@capstan/proto';
import { bool, empty, implement, int, op, resource, str } from '../operation.js';
import { projectView } from '../views.js';
import { invalid } from '../../support/validation.js';
import { findProject } from '../../projects/project.repository.js';
import type { ApiServices } from '../../services.js';
import type { RequestContext } from '../../support/request.js';
import { keepUnrepresentable } from '../unrepresentable.js';

/** Over gRPC, the stored project's fields that the message cannot carry are kept (see unrepresentable.ts). */
async function complete(
  s: ApiServices,
  ctx: RequestContext,
  manifest: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const name = (manifest.metadata as { name?: unknown } | undefined)?.name;
  if (ctx.via !== 'grpc' || typeof name !== 'string') return manifest;
  const stored = await findProject(s.db, name);
  return stored ? keepUnrepresentable(apiv1.Project, stored.project, manifest) : manifest;
}

const required = z.string().min(1, 'required');

/** The resource version travels in metadata; it is the caller's expectation, not part of the manifest. */
function versionOf(manifest: Record<string, unknown>): number {
  const v = (manifest.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
  return typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : 0;
}

export const projectOperations = implement<apiv1.ProjectServiceServer>(apiv1.ProjectServiceService, {
  create: op({
    http: { method: 'POST', path: '/api/v1/projects' },
    auth: 'user',
    summary: 'create an AppProject (upsert updates an existing one)',
    input: z.strictObject({ project: resource, upsert: bool }),
    request: apiv1.ProjectCreateRequest,
    response: apiv1.Project,
    run: async (s, ctx, i) =>
      projectView(await s.projects.create(ctx, await complete(s, ctx, i.project), i.upsert)),
  }),
  get: op({
    http: { method: 'GET', path: '/api/v1/projects/:name' },
    auth: 'user',
    summary: 'get an AppProject',
    input: z.strictObject({ name: z.string().min(1, 'required') }),
    request: apiv1.ProjectQuery,
    response: apiv1.Project,
    run: async (s, ctx, i) => projectView(await s.projects.get(ctx, i.name)),
  }),
  getEffectiveRestrictions: op({
    http: { method: 'GET', path: '/api/v1/projects/:name/effective-restrictions' },
    auth: 'user',
    summary:
      "an AppProject's effective restrictions under its parentProject chain (every link must allow); entries of links the caller may not get withheld",
    input: z.strictObject({ name: z.string().min(1, 'required') }),
    request: apiv1.ProjectQuery,
    response: apiv1.EffectiveRestrictions,
    run: (s, ctx, i) => s.projects.effective(ctx, i.name),
  }),
  list: op({
    http: { method: 'GET', path: '/api/v1/projects' },
    auth: 'user',
    summary: 'list the AppProjects the caller may get',
    input: empty,
    request: apiv1.ProjectListQuery,
    response: apiv1.ProjectList,
    run: async (s, ctx) => ({ items: (await s.projects.list(ctx)).map(projectView) }),
  }),
  update: op({
    http: { method: 'PUT', path: '/api/v1/projects/:name' },
    auth: 'user',
    summary: 'update an AppProject (metadata.resourceVersion, when set, must be current)',
    input: z.strictObject({ name: str, project: resource }),
    request: apiv1.ProjectUpdateRequest,
    response: apiv1.Project,
    run: async (s, ctx, i) => {
      const name = (i.project.metadata as { name?: unknown } | undefined)?.name;
      if (i.name && name !== i.name)
        throw invalid('project.metadata.name', `must match the path (${i.name})`);
      return projectView(
        await s.projects.update(ctx, await complete(s, ctx, i.project), versionOf(i.project)),
      );
    },
  }),
  delete: op({
    http: { method: 'DELETE', path: '/api/v1/projects/:name' },
    auth: 'user',
    summary: 'delete an AppProject without applications or child projects',
    input: z.strictObject({ name: z.string().min(1, 'required') }),
    request: apiv1.ProjectQuery,
    response: apiv1.Empty,
    run: async (s, ctx, i) => {
      await s.projects.delete(ctx, i.name);
      return {};
    },
  }),
  createToken: op({
    http: { method: 'POST', path: '/api/v1/projects/:project/roles/:role/token' },
    auth: 'user',
    summary: 'create a token of a project role (proj:<project>:<role>; needs projects, update)',
    input: z.strictObject({ project: required, role: required, description: str, expiresIn: int, id: str }),
    request: apiv1.ProjectTokenCreateRequest,
    response: apiv1.ProjectTokenResponse,
    run: (s, ctx, i) => s.projectTokens.create(ctx, i),
  }),
  deleteToken: op({
    http: { method: 'DELETE', path: '/api/v1/projects/:project/roles/:role/token/:iat' },
    auth: 'user',
    summary: 'delete a token of a project role by id, or by issued-at when no id is given',
    input: z.strictObject({ project: required, role: required, iat: int, id: str }),
    request: apiv1.ProjectTokenDeleteRequest,
    response: apiv1.Empty,
    run: async (s, ctx, i) => {
      await s.projectTokens.delete(ctx, i);
      return {};
    },
  }),
  listTokens: op({
    http: { method: 'GET', path: '/api/v1/projects/:project/roles/:role/token' },
    auth: 'user',
    summary: "list a project role's tokens (id, issued-at, expiry; never the token)",
    input: z.strictObject({ project: required, role: required }),
    request: apiv1.ProjectTokenListQuery,
    response: apiv1.ProjectTokenList,
    run: async (s, ctx, i) => ({
      items: (await s.projectTokens.list(ctx, i.project, i.role)).map((t) => ({
        iat: t.iat,
        exp: t.expiresAt ? Math.floor(t.expiresAt.getTime() / 1000) : 0,
        id: t.id,
      })),
    }),
  }),
});

export { versionOf };
