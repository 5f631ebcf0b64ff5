// Repository credentials belong to the repo service. The api authenticates and authorises each call
// (RBAC resource "repositories", object "<project>/<url>" for a project-scoped credential, the URL
// otherwise, as Argo CD) and forwards it with the caller's identity; the repo service applies the
// project-scoped selection rules and records the credential decision.
import { PermissionDeniedError, UnavailableError } from '@capstan/service';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import type { Principal } from '../auth/principal.js';
import { invalid } from '../support/validation.js';
import type { RepositoryInput } from '../apply/manifests.js';

export interface RepositoryView {
  repo: string;
  project: string;
  type: string;
  name: string;
  username: string;
  hasPassword: boolean;
  hasSshPrivateKey: boolean;
  insecure: boolean;
  secretName: string;
}

/** The repo service as the api sees it; `caller` is who the api proves to it (a delegation for a user). */
export interface RepoBackend {
  create(caller: Principal, input: RepositoryInput, upsert: boolean): Promise<RepositoryView>;
  /** Argo CD's declarative repository Secret, handed over as it is (its name and fields round-trip). */
  applySecret(caller: Principal, manifest: unknown): Promise<RepositoryView>;
  get(caller: Principal, repo: string, project: string): Promise<RepositoryView>;
  list(caller: Principal, project: string): Promise<RepositoryView[]>;
  delete(caller: Principal, repo: string, project: string): Promise<void>;
}

export class UnconfiguredRepoBackend implements RepoBackend {
  readonly unconfigured = true;
  private fail(): never {
    throw new UnavailableError('the repo service is not configured (repo.address)');
  }
  create(): Promise<RepositoryView> {
    this.fail();
  }
  applySecret(): Promise<RepositoryView> {
    this.fail();
  }
  get(): Promise<RepositoryView> {
    this.fail();
  }
  list(): Promise<RepositoryView[]> {
    this.fail();
  }
  delete(): Promise<void> {
    this.fail();
  }
}

export const repoObject = (project: string, repo: string) => (project ? `${project}/${repo}` : repo);

export class RepositoriesService {
  constructor(private readonly deps: { authz: Authorizer; backend: RepoBackend }) {}

  /** Refuses up front when repository calls cannot succeed (so an apply writes nothing). */
  requireBackend(): void {
    if ((this.deps.backend as Partial<UnconfiguredRepoBackend>).unconfigured) {
      throw new UnavailableError('the repo service is not configured (repo.address)');
    }
  }

  validate(input: RepositoryInput): RepositoryInput {
    if (!input.repo) throw invalid('repo', 'required');
    if (!/^(https?:\/\/|ssh:\/\/|git@|[\w.-]+@[\w.-]+:)/.test(input.repo))
      throw invalid('repo', 'must be an http(s) or ssh git URL');
    if (input.password && !input.username) throw invalid('username', 'required with a password');
    return input;
  }

  async create(ctx: RequestContext, input: RepositoryInput, upsert: boolean): Promise<RepositoryView> {
    this.validate(input);
    await this.deps.authz.check(
      ctx.principal,
      'repositories',
      'create',
      repoObject(input.project, input.repo),
      ctx.via,
    );
    if (upsert)
      await this.deps.authz.check(
        ctx.principal,
        'repositories',
        'update',
        repoObject(input.project, input.repo),
        ctx.via,
      );
    if (input.secretManifest !== undefined) {
      return this.deps.backend.applySecret(ctx.principal, input.secretManifest);
    }
    return this.deps.backend.create(ctx.principal, input, upsert);
  }

  async get(ctx: RequestContext, repo: string, project: string): Promise<RepositoryView> {
    if (!repo) throw invalid('repo', 'required');
    await this.deps.authz.check(ctx.principal, 'repositories', 'get', repoObject(project, repo), ctx.via);
    const found = await this.deps.backend.get(ctx.principal, repo, project);
    // Without a project the repo service may pick a project-scoped credential: check that one too.
    if (!project && found.project)
      await this.deps.authz.check(
        ctx.principal,
        'repositories',
        'get',
        repoObject(found.project, repo),
        ctx.via,
      );
    return found;
  }

  async list(ctx: RequestContext, project: string): Promise<RepositoryView[]> {
    const all = await this.deps.backend.list(ctx.principal, project);
    const visible = all.filter(
      (r) =>
        this.deps.authz.decide(ctx.principal, 'repositories', 'get', repoObject(r.project, r.repo)).allowed,
    );
    await this.deps.authz.record(
      ctx.principal,
      'repositories',
      'list',
      project ? `${project}/*` : '*',
      ctx.via,
      {
        allowed: true,
        reason: `listed ${visible.length} of ${all.length} repositories the caller may get`,
      },
    );
    return visible;
  }

  async delete(ctx: RequestContext, repo: string, project: string): Promise<void> {
    if (!repo) throw invalid('repo', 'required');
    await this.deps.authz.check(ctx.principal, 'repositories', 'delete', repoObject(project, repo), ctx.via);
    if (!project) {
      // The repo service resolves which credential "no project" means; the caller must hold delete on it.
      const found = await this.deps.backend.get(ctx.principal, repo, '');
      if (
        found.project &&
        !this.deps.authz.decide(ctx.principal, 'repositories', 'delete', repoObject(found.project, repo))
          .allowed
      ) {
        await this.deps.authz.check(
          ctx.principal,
          'repositories',
          'delete',
          repoObject(found.project, repo),
          ctx.via,
        );
        throw new PermissionDeniedError('permission denied');
      }
    }
    await this.deps.backend.delete(ctx.principal, repo, project);
  }
}
