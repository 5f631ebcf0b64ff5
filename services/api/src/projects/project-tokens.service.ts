// Project role tokens, as argocd proj role create-token / delete-token / list-tokens: a JWT for
// `proj:<project>:<role>` whose rights are exactly the role's policy lines, with an optional expiry,
// deleted by id or by issued-at. Creating and deleting need `projects, update` on the project (as
// Argo CD), listing `projects, get`; each decision and each token created or deleted is audited.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { AlreadyExistsError, NotFoundError } from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { TokenSigner } from '../auth/tokens.js';
import type { RequestContext } from '../support/request.js';
import { invalid } from '../support/validation.js';
import { findProject } from './project.repository.js';
import {
  deleteProjectTokens,
  insertProjectToken,
  listProjectTokens,
  type ProjectTokenRecord,
} from './project-tokens.repository.js';

const TOKEN_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** Ten years: a longer lifetime is a mistake (or an overflow), not a wish. */
const MAX_EXPIRES_IN = 10 * 365 * 24 * 3600;

export interface CreatedProjectToken {
  token: string;
  id: string;
  issuedAt: number;
  expiresAt: number;
}

export class ProjectTokensService {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      authz: Authorizer;
      authn: Authenticator;
      signer: TokenSigner;
    },
  ) {}

  /** The project must exist and have the role (Argo CD's messages). */
  private async requireRole(project: string, role: string): Promise<void> {
    const stored = await findProject(this.deps.db, project);
    if (!stored) throw new NotFoundError(`appprojects.argoproj.io "${project}" not found`);
    if (!(stored.project.spec.roles ?? []).some((r) => r.name === role))
      throw new NotFoundError(`project '${project}' does not have role '${role}'`);
  }

  async create(
    ctx: RequestContext,
    input: { project: string; role: string; expiresIn: number; id: string },
  ): Promise<CreatedProjectToken> {
    const { project, role } = input;
    await this.deps.authz.check(ctx.principal, 'projects', 'update', project, ctx.via);
    if (input.expiresIn < 0 || input.expiresIn > MAX_EXPIRES_IN)
      throw invalid('expiresIn', `must be between 0 (no expiry) and ${MAX_EXPIRES_IN} seconds`);
    if (input.id && !TOKEN_ID.test(input.id))
      throw invalid('id', 'must be 1-64 characters of [A-Za-z0-9._-]');
    await this.requireRole(project, role);
    const id = input.id || randomUUID();
    const iat = Math.floor(Date.now() / 1000);
    const expiresAt = input.expiresIn > 0 ? iat + input.expiresIn : 0;
    const row: ProjectTokenRecord = {
      project,
      role,
      id,
      iat,
      expiresAt: expiresAt ? new Date(expiresAt * 1000) : null,
      createdBy: ctx.principal.name,
    };
    if (!(await insertProjectToken(this.deps.db, row)))
      throw new AlreadyExistsError(
        `token with id '${id}' already exists for role '${role}' of project '${project}'`,
      );
    const token = await this.deps.signer.sign({
      sub: `proj:${project}:${role}`,
      kind: 'project',
      jti: id,
      iat,
      expiresInSeconds: input.expiresIn || undefined,
    });
    await this.deps.authz.record(ctx.principal, 'projects', 'update', project, ctx.via, {
      allowed: true,
      reason: `created token ${id} of role ${role} (expires ${expiresAt ? new Date(expiresAt * 1000).toISOString() : 'never'})`,
    });
    return { token, id, issuedAt: iat, expiresAt };
  }

  async delete(
    ctx: RequestContext,
    input: { project: string; role: string; id: string; iat: number },
  ): Promise<void> {
    const { project, role } = input;
    await this.deps.authz.check(ctx.principal, 'projects', 'update', project, ctx.via);
    if (!input.id && input.iat <= 0) throw invalid('iat', 'name the token by its id or its issued-at');
    await this.requireRole(project, role);
    const by = input.id ? { id: input.id } : { iat: input.iat };
    const removed = await deleteProjectTokens(this.deps.db, project, role, by);
    if (removed.length === 0)
      throw new NotFoundError(
        `role '${role}' of project '${project}' has no token ${input.id ? `with id '${input.id}'` : `issued at ${input.iat}`}`,
      );
    for (const t of removed) this.deps.authn.forgetProjectToken(project, role, t.id);
    await this.deps.authz.record(ctx.principal, 'projects', 'update', project, ctx.via, {
      allowed: true,
      reason: `deleted token ${removed.map((t) => t.id).join(', ')} of role ${role}`,
    });
  }

  async list(ctx: RequestContext, project: string, role: string): Promise<ProjectTokenRecord[]> {
    await this.deps.authz.check(ctx.principal, 'projects', 'get', project, ctx.via);
    await this.requireRole(project, role);
    return listProjectTokens(this.deps.db, project, role);
  }
}
