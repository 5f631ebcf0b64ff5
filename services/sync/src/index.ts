export { startSync, type SyncConfig, type SyncPorts } from './sync-service.js';
export { syncSettings } from './settings.js';
export type { ClusterCredentialsSource } from './kube/cluster-credentials.js';
export type { ClusterConnection } from './kube/kube-config.js';
export type { ManifestSource, KubeObject, RenderedManifests } from './manifests/manifest-source.js';
export type { RunningReconciler } from './reconcile/start.js';
