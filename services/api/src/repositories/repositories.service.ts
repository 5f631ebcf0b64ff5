// Repository credentials belong to the repo service. The api authenticates and authorises each call
// (RBAC resource "repositories", object "<project>/<url>" for a project-scoped credential, the URL
// otherwise, as Argo CD; project roles may grant them inside their project) and forwards it with the
// caller's identity; the repo service applies the project-scoped selection rules and records the
// credential decision. A mutation is authorised against the credential as it is and as it will be.
import type { apiv1 } from '@capstan/proto';
import { redactRepoUrl, repoUrlProblem, sameRepoUrl } from '@capstan/policy';
import {
  CapstanError,
  FailedPreconditionError,
  PermissionDeniedError,
  UnavailableError,
} from '@capstan/service';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import type { Principal } from '../auth/principal.js';
import { invalid } from '../support/validation.js';
import type { RepositoryInput } from '../apply/manifests.js';
import { sharedCheckouts, type RepositoryUse } from './shared-checkouts.js';

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
  enableOci: boolean;
  insecureOciForceHttp: boolean;
  /**
   * In a list: the projects (that the caller may get) whose Applications of this URL resolve to this
   * credential, and so share one checkout.
   */
  sharedCheckoutProjects?: string[];
}

/** What applying a declarative Secret did, or (dry run) would do, and to which credential. */
export interface SecretApplyOutcome {
  /** The credential written; in a dry run the one the Secret's name holds, or null. */
  credential: RepositoryView | null;
  /** Its id ('' when none), to pin the apply to what was authorised. */
  id: string;
  outcome: 'created' | 'configured';
}

/** An authorised plan for a declarative Secret: what it does and which holder of the name it expects. */
export interface SecretPlan {
  outcome: 'created' | 'configured';
  expectedId: string;
}

/** The repo service as the api sees it; `caller` is who the api proves to it (a delegation for a user). */
export interface RepoBackend {
  create(caller: Principal, input: RepositoryInput, upsert: boolean): Promise<RepositoryView>;
  /**
   * Argo CD's declarative repository Secret, handed over as it is (its name and fields round-trip).
   * A name held by another scope is ALREADY_EXISTS; `expectedId` refuses a changed holder.
   */
  applySecret(
    caller: Principal,
    manifest: unknown,
    opts: { dryRun: boolean; expectedId?: string },
  ): Promise<SecretApplyOutcome>;
  get(caller: Principal, repo: string, project: string): Promise<RepositoryView>;
  list(caller: Principal, project: string): Promise<RepositoryView[]>;
  delete(caller: Principal, repo: string, project: string): Promise<void>;
  /** The peer's effective settings (`capstan admin settings`); absent when the peer is not configured. */
  settings?(showSource: boolean): Promise<apiv1.SettingEntry[]>;
}

export class UnconfiguredRepoBackend implements RepoBackend {
  readonly unconfigured = true;
  private fail(): never {
    throw new UnavailableError('the repo service is not configured (repo.address)');
  }
  create(): Promise<RepositoryView> {
    this.fail();
  }
  applySecret(): Promise<SecretApplyOutcome> {
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
  constructor(
    private readonly deps: {
      authz: Authorizer;
      backend: RepoBackend;
      /** The (project, URL) pairs the Applications use; absent: no checkout sharing is reported. */
      uses?: () => Promise<RepositoryUse[]>;
    },
  ) {}

  /** Refuses up front when repository calls cannot succeed (so an apply writes nothing). */
  requireBackend(): void {
    if ((this.deps.backend as Partial<UnconfiguredRepoBackend>).unconfigured) {
      throw new UnavailableError('the repo service is not configured (repo.address)');
    }
  }

  validate(input: RepositoryInput): RepositoryInput {
    if (!input.repo) throw invalid('repo', 'required');
    // The repo service's own check (@capstan/policy), so nothing it would refuse is forwarded.
    const problem = repoUrlProblem(input.repo, { allowOci: input.type === 'helm' });
    if (problem) throw invalid('repo', problem);
    if (input.password && !input.username) throw invalid('username', 'required with a password');
    return input;
  }

  /**
   * Authorises a declarative Secret and says what applying it does: `create` on the scope and URL
   * it names; when its name already holds a credential (always of the same scope: another scope's
   * is ALREADY_EXISTS from the repo service, naming neither side), also `update` on it as it will
   * be and as it is today. Nothing is written.
   */
  async planSecret(ctx: RequestContext, input: RepositoryInput): Promise<SecretPlan> {
    this.validate(input);
    const target = repoObject(input.project, input.repo);
    await this.deps.authz.check(ctx.principal, 'repositories', 'create', target, ctx.via);
    const plan = await this.deps.backend.applySecret(ctx.principal, input.secretManifest, {
      dryRun: true,
    });
    if (plan.credential) {
      await this.deps.authz.check(ctx.principal, 'repositories', 'update', target, ctx.via);
      const current = repoObject(plan.credential.project, plan.credential.repo);
      if (current !== target) {
        const d = this.deps.authz.decide(ctx.principal, 'repositories', 'update', current);
        await this.deps.authz.record(ctx.principal, 'repositories', 'update', current, ctx.via, d);
        // The caller may not see that credential: the refusal names the Secret, not its URL.
        if (!d.allowed)
          throw new PermissionDeniedError(
            'permission denied: repositories, update, the credential this Secret name holds',
          );
      }
    }
    return { outcome: plan.outcome, expectedId: plan.id };
  }

  /** Applies a declarative Secret as planned (refused when the name's holder changed since). */
  async applySecret(
    ctx: RequestContext,
    input: RepositoryInput,
    plan: SecretPlan,
  ): Promise<{ view: RepositoryView; outcome: 'created' | 'configured' }> {
    const res = await this.deps.backend.applySecret(ctx.principal, input.secretManifest, {
      dryRun: false,
      expectedId: plan.expectedId,
    });
    if (!res.credential) throw new UnavailableError('the repo service returned no credential');
    return { view: res.credential, outcome: res.outcome };
  }

  async create(ctx: RequestContext, input: RepositoryInput, upsert: boolean): Promise<RepositoryView> {
    if (input.secretManifest !== undefined) {
      return (await this.applySecret(ctx, input, await this.planSecret(ctx, input))).view;
    }
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
    return this.deps.backend.create(ctx.principal, input, upsert);
  }

  async get(ctx: RequestContext, repo: string, project: string): Promise<RepositoryView> {
    if (!repo) throw invalid('repo', 'required');
    await this.deps.authz.check(ctx.principal, 'repositories', 'get', repoObject(project, repo), ctx.via);
    const found = await this.resolve(ctx, repo, project);
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
    // Resolution needs every credential of each URL (a project's own one, even one the caller may
    // not see, keeps it off the unscoped checkout); only visible credentials and projects are told.
    const everything = project ? await this.deps.backend.list(ctx.principal, '') : all;
    const shared = this.deps.uses ? sharedCheckouts(everything, await this.deps.uses()) : [];
    const mayGetProject = (p: string) => this.deps.authz.decide(ctx.principal, 'projects', 'get', p).allowed;
    const visible = all
      .filter(
        (r) =>
          this.deps.authz.decide(ctx.principal, 'repositories', 'get', repoObject(r.project, r.repo)).allowed,
      )
      .map((r) => {
        const at = everything.findIndex((e) => e.secretName === r.secretName);
        return { ...r, sharedCheckoutProjects: (shared[at] ?? []).filter(mayGetProject) };
      });
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
      const found = await this.resolve(ctx, repo, '');
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

  /**
   * The repo service's get. Its "several credentials, name the project" refusal is rewritten to
   * list only the projects whose credential for this URL the caller may get.
   */
  private async resolve(ctx: RequestContext, repo: string, project: string): Promise<RepositoryView> {
    try {
      return await this.deps.backend.get(ctx.principal, repo, project);
    } catch (err) {
      if (project || !(err instanceof CapstanError) || err.code !== 'FAILED_PRECONDITION') throw err;
      const all = await this.deps.backend.list(ctx.principal, '');
      const visible = all
        .filter((r) => sameRepoUrl(r.repo, repo))
        .filter(
          (r) =>
            this.deps.authz.decide(ctx.principal, 'repositories', 'get', repoObject(r.project, r.repo))
              .allowed,
        )
        .map((r) => r.project || '(unscoped)');
      throw new FailedPreconditionError(
        `several credentials exist for ${redactRepoUrl(repo)}; name the project` +
          (visible.length > 0 ? ` (projects you may see: ${visible.join(', ')})` : ''),
        { cause: err },
      );
    }
  }
}
