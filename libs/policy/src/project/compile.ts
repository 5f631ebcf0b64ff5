// An AppProject compiled once: every glob parsed, every defaultServiceAccount parsed, and every
// problem an operator must fix collected as a field-path issue. The same compilation serves the
// api's write-time validation (the issues) and the sync's decisions (the matchers), so the two
// can never disagree about what a pattern means.
import { compileGlob, GlobSyntaxError, type Glob } from '@capstan/glob';
import type { PolicyIssue } from '../issues.js';
import type { AppProject, AppProjectSpec, GroupKind } from '../manifests/schemas.js';
import { DEFAULT_CONTROL_NAMESPACE } from '../manifests/schemas.js';
import { parseServiceAccountRef, type ServiceAccountRef } from '../serviceaccount/names.js';
import { normalizeRepoUrl } from '../repository/repo-url.js';
import { syncWindowIssues } from './sync-windows.js';

export interface CompiledServiceAccountRule {
  readonly index: number;
  readonly server: string;
  readonly namespace: string;
  readonly defaultServiceAccount: string;
  /** { server, namespace } as written, shared by every resolution this rule decides. */
  readonly pattern: { readonly server: string; readonly namespace: string };
  /** Undefined when the pattern does not compile (the project then carries an issue). */
  readonly serverGlob: Glob | undefined;
  readonly namespaceGlob: Glob | undefined;
  readonly account: ServiceAccountRef;
  /** For `namespace:name`: the account, built once. */
  readonly fixedAccount: { readonly namespace: string; readonly name: string } | undefined;
}

/** A pattern of sourceRepos or destinations: `!` makes it a deny pattern (Argo CD's negation). */
export interface NegatableGlob {
  readonly raw: string;
  readonly deny: boolean;
  /** Undefined when the pattern does not compile. */
  readonly glob: Glob | undefined;
}

export interface CompiledDestination {
  readonly index: number;
  readonly server: NegatableGlob | undefined;
  readonly name: NegatableGlob | undefined;
  readonly namespace: NegatableGlob;
}

export interface CompiledGroupKind {
  readonly group: Glob | undefined;
  readonly kind: Glob | undefined;
  /** Undefined: any name. */
  readonly name: Glob | undefined;
  readonly raw: GroupKind;
}

export interface CompiledProject {
  readonly name: string;
  readonly namespace: string;
  readonly parent: string | undefined;
  readonly spec: AppProjectSpec;
  /** Everything that makes this project invalid; a project with issues refuses every sync. */
  readonly issues: readonly PolicyIssue[];
  readonly serviceAccountRules: readonly CompiledServiceAccountRule[];
  readonly sourceRepos: readonly NegatableGlob[];
  readonly destinations: readonly CompiledDestination[];
  readonly sourceNamespaces: readonly (Glob | undefined)[];
  readonly clusterResourceWhitelist: readonly CompiledGroupKind[] | undefined;
  readonly clusterResourceBlacklist: readonly CompiledGroupKind[] | undefined;
  readonly namespaceResourceWhitelist: readonly CompiledGroupKind[] | undefined;
  readonly namespaceResourceBlacklist: readonly CompiledGroupKind[] | undefined;
}

const MATCH_ALL: Glob = { pattern: '*', size: 2, match: () => true };

const compiled = new WeakMap<AppProject, CompiledProject>();

/** Compiles (once per object: the result is cached by identity) and never throws. */
export function compileProject(project: AppProject): CompiledProject {
  let c = compiled.get(project);
  if (c === undefined) {
    c = new ProjectCompiler(project).compile();
    compiled.set(project, c);
  }
  return c;
}

class ProjectCompiler {
  private readonly issues: PolicyIssue[] = [];
  constructor(private readonly project: AppProject) {}

  private glob(pattern: string, path: string, separators?: string): Glob | undefined {
    try {
      return compileGlob(pattern, separators === undefined ? {} : { separators });
    } catch (err) {
      if (!(err instanceof GlobSyntaxError)) throw err;
      this.issues.push({ path, message: `invalid glob ${JSON.stringify(pattern)}: ${err.detail}` });
      return undefined;
    }
  }

  private negatable(
    raw: string,
    path: string,
    separators?: string,
    normalize?: (s: string) => string,
  ): NegatableGlob {
    const deny = raw.startsWith('!');
    const body = deny ? raw.slice(1) : raw;
    const pattern = normalize ? normalize(body) : body;
    // Argo CD's globMatch: a bare '*' matches everything, separators or not.
    if (pattern === '*') return { raw, deny, glob: MATCH_ALL };
    return { raw, deny, glob: this.glob(pattern, path, separators) };
  }

  compile(): CompiledProject {
    const { metadata, spec } = this.project;
    if (spec.parentProject !== undefined && spec.parentProject === metadata.name) {
      this.issues.push({ path: 'spec.parentProject', message: 'a project cannot be its own parent' });
    }
    this.unsupported(spec);
    this.issues.push(...syncWindowIssues(spec.syncWindows ?? []));
    return {
      name: metadata.name,
      namespace: metadata.namespace ?? DEFAULT_CONTROL_NAMESPACE,
      parent: spec.parentProject,
      spec,
      serviceAccountRules: this.serviceAccountRules(spec),
      sourceRepos: this.sourceRepos(spec),
      destinations: this.destinations(spec),
      sourceNamespaces: (spec.sourceNamespaces ?? []).map((p, i) =>
        this.glob(p, `spec.sourceNamespaces[${i}]`),
      ),
      clusterResourceWhitelist: this.groupKinds(
        spec.clusterResourceWhitelist,
        'spec.clusterResourceWhitelist',
      ),
      clusterResourceBlacklist: this.groupKinds(
        spec.clusterResourceBlacklist,
        'spec.clusterResourceBlacklist',
      ),
      namespaceResourceWhitelist: this.groupKinds(
        spec.namespaceResourceWhitelist,
        'spec.namespaceResourceWhitelist',
      ),
      namespaceResourceBlacklist: this.groupKinds(
        spec.namespaceResourceBlacklist,
        'spec.namespaceResourceBlacklist',
      ),
      issues: this.issues,
    };
  }

  /**
   * Fields Capstan does not implement are refused, never accepted and ignored (a project that
   * says "only signed commits" must not sync unsigned ones). Stored projects written before this
   * rule refuse their syncs with the same message until the field is removed.
   */
  private unsupported(spec: AppProjectSpec): void {
    if (spec.signatureKeys !== undefined && spec.signatureKeys.length > 0)
      this.issues.push({
        path: 'spec.signatureKeys',
        message:
          'not supported: Capstan does not verify GnuPG commit signatures; remove signatureKeys (a project that requires signed commits would otherwise sync unsigned ones)',
      });
    if (spec.orphanedResources !== undefined)
      this.issues.push({
        path: 'spec.orphanedResources',
        message:
          'not supported yet: Capstan does not observe orphaned resources (it needs live state); remove orphanedResources',
      });
  }

  /** The write-time rules for destinationServiceAccounts: Argo CD's, plus DNS names (docs/decisions.md). */
  private serviceAccountRules(spec: AppProjectSpec): CompiledServiceAccountRule[] {
    const seen = new Map<string, number>();
    return (spec.destinationServiceAccounts ?? []).map((dsa, index) => {
      const at = `spec.destinationServiceAccounts[${index}]`;
      const patternGlob = (value: string, field: 'server' | 'namespace') => {
        if (value.includes('!')) {
          this.issues.push({
            path: `${at}.${field}`,
            message: `invalid glob ${JSON.stringify(value)}: "!" (negation) is not allowed here`,
          });
          return undefined;
        }
        return this.glob(value, `${at}.${field}`);
      };
      const serverGlob = patternGlob(dsa.server, 'server');
      const namespaceGlob = patternGlob(dsa.namespace, 'namespace');
      const account = parseServiceAccountRef(dsa.defaultServiceAccount);
      if (account.kind === 'invalid') {
        this.issues.push({
          path: `${at}.defaultServiceAccount`,
          message: `${JSON.stringify(dsa.defaultServiceAccount)} ${account.problem}`,
        });
      }
      const key = `${dsa.server}\u0000${dsa.namespace}`;
      const first = seen.get(key);
      if (first !== undefined) {
        this.issues.push({
          path: at,
          message: `duplicates spec.destinationServiceAccounts[${first}] (same server ${JSON.stringify(dsa.server)} and namespace ${JSON.stringify(dsa.namespace)})`,
        });
      } else {
        seen.set(key, index);
      }
      return {
        index,
        server: dsa.server,
        namespace: dsa.namespace,
        defaultServiceAccount: dsa.defaultServiceAccount,
        pattern: Object.freeze({ server: dsa.server, namespace: dsa.namespace }),
        serverGlob,
        namespaceGlob,
        account,
        fixedAccount:
          account.kind === 'qualified'
            ? Object.freeze({ namespace: account.namespace, name: account.name })
            : undefined,
      };
    });
  }

  private sourceRepos(spec: AppProjectSpec): NegatableGlob[] {
    const seen = new Set<string>();
    return (spec.sourceRepos ?? []).map((raw, i) => {
      const at = `spec.sourceRepos[${i}]`;
      if (raw === '!*')
        this.issues.push({
          path: at,
          message: '"!*" denies every repository; remove the project\'s sourceRepos instead',
        });
      if (seen.has(raw))
        this.issues.push({ path: at, message: `duplicate source repository ${JSON.stringify(raw)}` });
      seen.add(raw);
      // Argo CD matches repository URLs with '/' as separator, after normalising both sides.
      return this.negatable(raw, at, '/', normalizeRepoUrl);
    });
  }

  private destinations(spec: AppProjectSpec): CompiledDestination[] {
    const seen = new Map<string, number>();
    return (spec.destinations ?? []).map((d, index) => {
      const at = `spec.destinations[${index}]`;
      for (const field of ['server', 'name', 'namespace'] as const) {
        if (d[field] === '!*')
          this.issues.push({
            path: `${at}.${field}`,
            message: '"!*" matches nothing; remove the destination instead',
          });
      }
      if (!d.server && !d.name) this.issues.push({ path: at, message: 'server or name is required' });
      const key = `${d.server ? d.server : (d.name ?? '')}/${d.namespace ?? ''}`;
      const first = seen.get(key);
      if (first !== undefined)
        this.issues.push({ path: at, message: `duplicates spec.destinations[${first}] (${key})` });
      else seen.set(key, index);
      return {
        index,
        server: d.server ? this.negatable(d.server, `${at}.server`) : undefined,
        name: d.name ? this.negatable(d.name, `${at}.name`) : undefined,
        namespace: this.negatable(d.namespace ?? '', `${at}.namespace`),
      };
    });
  }

  private groupKinds(list: GroupKind[] | undefined, path: string): CompiledGroupKind[] | undefined {
    if (list === undefined) return undefined;
    return list.map((gk, i) => {
      if (gk.kind === '') this.issues.push({ path: `${path}[${i}].kind`, message: 'must not be empty' });
      // Argo CD matches group and kind with Go's filepath.Match, where '*' stops at '/'.
      return {
        group: this.glob(gk.group, `${path}[${i}].group`, '/'),
        kind: this.glob(gk.kind, `${path}[${i}].kind`, '/'),
        name: gk.name ? this.glob(gk.name, `${path}[${i}].name`, '/') : undefined,
        raw: gk,
      };
    });
  }
}
