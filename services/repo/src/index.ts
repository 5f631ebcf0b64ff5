// @capstan/repo: the repo service. Other packages talk to it over gRPC (capstan.repo.v1.RepoService
// in @capstan/proto) and events; this entry point exports what tests, benchmarks and tools need to
// start it in-process and the pure credential rules.
export { repoSettings } from './settings.js';
export { startRepo, type RepoConfig, type RepoServiceHandles } from './repo-service.js';
export { credentialSecretName, fnv1a32 } from './credentials/secret-name.js';
export { normalizeRepoUrl, sameRepoUrl } from './credentials/repo-url.js';
export { selectForProject, resolveForApi, findForMutation } from './credentials/selection.js';
export { parseRepositorySecret } from './credentials/declarative-secret.js';
export { methodPolicy } from './rpc/service-identity.js';
