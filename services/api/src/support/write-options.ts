// How a declarative apply writes each object: the same checks whether it commits or not (a dry run
// skips only the append), and what earlier documents of the same request would create, so a dry run
// sees a project or cluster that the request itself brings (a real apply has already written them).
import type { AppProject } from '@capstan/policy';

export interface PendingObjects {
  /** Projects by name, from earlier documents of the request. */
  projects: Map<string, AppProject>;
  /** Cluster servers by cluster name, from earlier documents of the request. */
  clusters: Map<string, string>;
}

export interface WriteOptions {
  upsert: boolean;
  dryRun?: boolean;
  pending?: PendingObjects;
}
