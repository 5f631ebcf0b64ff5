// What the engine needs from the outside world, injected by its caller: the appset service wires
// them to the repo service's gRPC (with the credential of the set owner's project) and to the api's
// cluster registry; the offline CLI passes none. The engine does no other I/O.

/** A repository-relative glob with Argo's `exclude` flag. */
export interface PathPattern {
  readonly pattern: string;
  readonly exclude: boolean;
}

export interface GitListRequest {
  readonly repoURL: string;
  /** `spec.generators[].git.revision`, `HEAD` when empty. */
  readonly revision: string;
  readonly patterns: readonly PathPattern[];
}

/** Git generators read through this (the repo service's ListDirectories / ListFiles). */
export interface GitProvider {
  /** Directories (not files) of the tree, repository-relative, matching the patterns. */
  listDirectories(req: GitListRequest): Promise<{ revision?: string; paths: readonly string[] }>;
  /** Files matching the patterns, with their UTF-8 content. */
  listFiles(
    req: GitListRequest,
  ): Promise<{ revision?: string; files: readonly { path: string; content: string }[] }>;
}

/** A registered cluster as the clusters generator sees it: never its credentials. */
export interface ClusterInfo {
  readonly name: string;
  readonly server: string;
  readonly project?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** The clusters generator reads the registry through this (registered clusters only: the engine
 * adds Argo's `in-cluster` entry itself when no registered cluster has its server). */
export interface ClusterProvider {
  listClusters(): Promise<readonly ClusterInfo[]>;
}

export interface Providers {
  readonly git?: GitProvider;
  readonly clusters?: ClusterProvider;
}
