// What the UI reads of the api's responses. The OpenAPI document types every request but describes
// each response only as "the proto JSON mapping" (an object), so the fields read here are named once,
// in Argo CD's Application shape that the api returns (capstan.api.v1.Application).
export interface ResourceStatus {
  group?: string;
  version?: string;
  kind: string;
  namespace?: string;
  name: string;
  status?: string;
  health?: { status?: string; message?: string };
  requiresPruning?: boolean;
}

export interface OperationState {
  phase?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  syncResult?: { revision?: string; resources?: (ResourceStatus & { message?: string })[] };
}

export interface HistoryEntry {
  id?: number | string;
  revision?: string;
  deployedAt?: string;
  source?: { repoURL?: string; path?: string; targetRevision?: string };
}

export interface Application {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: {
    project?: string;
    source?: { repoURL?: string; path?: string; targetRevision?: string; chart?: string };
    destination?: { server?: string; name?: string; namespace?: string };
  };
  status?: {
    sync?: { status?: string; revision?: string };
    health?: { status?: string; message?: string };
    resources?: ResourceStatus[];
    operationState?: OperationState;
    history?: HistoryEntry[];
    reconciledAt?: string;
  };
}

export interface ApplicationList {
  items?: Application[];
  nextPageToken?: string;
}

export const syncOf = (a: Application) => a.status?.sync?.status || 'Unknown';
export const healthOf = (a: Application) => a.status?.health?.status || 'Unknown';
export const clusterOf = (a: Application) => a.spec.destination?.server || a.spec.destination?.name || '';
export const namespaceOf = (a: Application) => a.spec.destination?.namespace || '';
export const projectOf = (a: Application) => a.spec.project || 'default';
