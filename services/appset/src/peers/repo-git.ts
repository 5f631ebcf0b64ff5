// The git generators' provider over the repo service (ListDirectories / ListFiles / ResolveRevision)
// with a delegation for the caller or the set's owner. The revision is resolved first, so every
// listing of one generation reads the same commit, and so the repo service watches the source: its
// revision-changed events then reach the reconciler. The credential is the one the repo service
// selects for `project` (the set's template project when it is literal, else unscoped).
import { repov1, unary } from '@capstan/proto';
import { fromPeer, type ServiceClient } from '@capstan/service-identity';
import type { GitListRequest, GitProvider } from '@capstan/appset-engine';

export interface RepoPeer {
  /** A provider acting with `delegation` (audience repo); `beforeRead` runs before each repository is read. */
  gitProvider(opts: {
    delegation: string;
    project: string;
    beforeRead?: (repoURL: string) => Promise<void>;
  }): GitProvider;
  close(): void;
}

const TIMEOUT_MS = 120_000;

export function grpcRepoPeer(address: string, identity: ServiceClient): RepoPeer {
  const client = new repov1.RepoServiceClient(address, identity.credentials);
  return {
    gitProvider({ delegation, project, beforeRead }) {
      const opts = { metadata: identity.metadata(delegation), timeoutMs: TIMEOUT_MS };
      const application = { name: '', namespace: '', project };
      const resolved = new Map<string, Promise<string>>();
      const commit = (req: GitListRequest) => {
        const key = `${req.repoURL}\n${req.revision}`;
        let sha = resolved.get(key);
        if (!sha) {
          sha = (async () => {
            await beforeRead?.(req.repoURL);
            const res = await fromPeer('repo', () =>
              unary(
                client.resolveRevision.bind(client),
                { repoUrl: req.repoURL, revision: req.revision || 'HEAD', application },
                opts,
              ),
            );
            return res.sha;
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
