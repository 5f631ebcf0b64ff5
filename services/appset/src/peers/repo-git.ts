// The git generators' provider over the repo service (ListDirectories / ListFiles / ResolveRevision)
// with a delegation for the caller or the set's owner. The revision is resolved first, so every
// listing of one generation reads the same commit, and so the repo service watches the source: its
// revision-changed events then reach the reconciler. The credential is the one the repo service
// selects for `project` (the set's template project when it is literal, else unscoped).
import { repov1, unary } from '@capstan/proto';
import { fromPeer, type ServiceClient } from '@capstan/service-identity';
import type { GitListRequest, GitProvider } from '@capstan/appset-engine';

/** Whom a repository is read for: a delegation (audience repo) and the project choosing the credential. */
export interface GitAccess {
  delegation: string;
  project: string;
}

/** A revision of a repository as resolved for one generation. */
export interface ResolvedRevision {
  repoURL: string;
  revision: string;
  sha: string;
}

export interface RepoPeer {
  /**
   * A provider acting with `delegation` (audience repo); `beforeRead` runs before each repository is
   * read, `onResolved` learns each revision it resolved (once per repository and revision).
   */
  gitProvider(
    opts: GitAccess & {
      beforeRead?: (repoURL: string) => Promise<void>;
      onResolved?: (resolved: ResolvedRevision) => void;
    },
  ): GitProvider;
  /** The commit `revision` of `repoURL` is at now, resolved as a provider would. */
  resolveRevision(access: GitAccess, repoURL: string, revision: string): Promise<string>;
  close(): void;
}

const TIMEOUT_MS = 120_000;

export function grpcRepoPeer(address: string, identity: ServiceClient): RepoPeer {
  const client = new repov1.RepoServiceClient(address, identity.credentials);
  const callOpts = (delegation: string) => ({
    metadata: identity.metadata(delegation),
    timeoutMs: TIMEOUT_MS,
  });
  const resolveRevision = async (access: GitAccess, repoURL: string, revision: string) => {
    const application = { name: '', namespace: '', project: access.project };
    const res = await fromPeer('repo', () =>
      unary(
        client.resolveRevision.bind(client),
        { repoUrl: repoURL, revision: revision || 'HEAD', application },
        callOpts(access.delegation),
      ),
    );
    return res.sha;
  };
  return {
    resolveRevision,
    gitProvider({ delegation, project, beforeRead, onResolved }) {
      const opts = callOpts(delegation);
      const application = { name: '', namespace: '', project };
      const resolved = new Map<string, Promise<string>>();
      const commit = (req: GitListRequest) => {
        const revision = req.revision || 'HEAD';
        const key = `${req.repoURL}\n${revision}`;
        let sha = resolved.get(key);
        if (!sha) {
          sha = (async () => {
            await beforeRead?.(req.repoURL);
            const sha = await resolveRevision({ delegation, project }, req.repoURL, revision);
            onResolved?.({ repoURL: req.repoURL, revision, sha });
            return sha;
          })();
          resolved.set(key, sha);
        }
        return sha;
      };
      const patterns = (req: GitListRequest) =>
        req.patterns.map((p) => ({ pattern: p.pattern, exclude: p.exclude }));
      return {
        async listDirectories(req) {
          const revision = await commit(req);
          const res = await fromPeer('repo', () =>
            unary(
              client.listDirectories.bind(client),
              { repoUrl: req.repoURL, revision, application, patterns: patterns(req) },
              opts,
            ),
          );
          return { revision: res.revision, paths: res.paths };
        },
        async listFiles(req) {
          const revision = await commit(req);
          const res = await fromPeer('repo', () =>
            unary(
              client.listFiles.bind(client),
              { repoUrl: req.repoURL, revision, application, patterns: patterns(req), withContent: true },
              opts,
            ),
          );
          return {
            revision: res.revision,
            files: res.files.map((f) => ({ path: f.path, content: f.content })),
          };
        },
      };
    },
    close: () => client.close(),
  };
}
