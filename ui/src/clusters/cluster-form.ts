// The cluster form (Argo CD's cluster secret: server, name, namespaces, project, and one control-plane
// credential in the `config` shape) and its registration request. Credentials are never read back
// (the api returns only their kind): editing with the credential left empty keeps the stored one.
import { lines } from '../forms/violations';

export interface Cluster {
  metadata?: { resourceVersion?: string };
  server: string;
  name?: string;
  namespaces?: string[];
  project?: string;
  credentialType?: string;
  insecure?: boolean;
  serverName?: string;
  hasCaData?: boolean;
}

export type Credential = 'keep' | 'none' | 'bearer' | 'basic' | 'tls';

export interface ClusterDraft {
  server: string;
  name: string;
  namespaces: string;
  project: string;
  credential: Credential;
  bearerToken: string;
  username: string;
  password: string;
  certData: string;
  keyData: string;
  caData: string;
  insecure: boolean;
  serverName: string;
}

export const CLUSTER_FIELDS = {
  server: 'server',
  name: 'name',
  namespaces: 'namespaces',
  project: 'project',
  credential: 'config',
  bearerToken: 'config.bearerToken',
  username: 'config.username',
  password: 'config.password',
  certData: 'config.tlsClientConfig.certData',
  keyData: 'config.tlsClientConfig.keyData',
  caData: 'config.tlsClientConfig.caData',
  serverName: 'config.tlsClientConfig.serverName',
} as const;

export function clusterDraftOf(c?: Cluster): ClusterDraft {
  return {
    server: c?.server ?? '',
    name: c?.name ?? '',
    namespaces: (c?.namespaces ?? []).join('\n'),
    project: c?.project ?? '',
    credential: c ? 'keep' : 'bearer',
    bearerToken: '',
    username: '',
    password: '',
    certData: '',
    keyData: '',
    caData: '',
    insecure: c?.insecure ?? false,
    serverName: c?.serverName ?? '',
  };
}

/** The body of ClusterService.Create / Update; `config` only when a credential is given. */
export function registrationOf(d: ClusterDraft, stored?: Cluster) {
  const base = {
    server: d.server.trim(),
    name: d.name.trim(),
    namespaces: lines(d.namespaces),
    project: d.project.trim(),
    ...(stored?.metadata?.resourceVersion
      ? { resourceVersion: Number(stored.metadata.resourceVersion) }
      : {}),
  };
  if (d.credential === 'keep') return base;
  const tlsClientConfig = {
    insecure: d.insecure,
    serverName: d.serverName,
    caData: d.caData,
    certData: d.credential === 'tls' ? d.certData : '',
    keyData: d.credential === 'tls' ? d.keyData : '',
  };
  const config = {
    bearerToken: d.credential === 'bearer' ? d.bearerToken : '',
    username: d.credential === 'basic' ? d.username : '',
    password: d.credential === 'basic' ? d.password : '',
    tlsClientConfig,
  };
  return { ...base, config };
}
