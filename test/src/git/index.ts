// @capstan/test/git: a real git server over HTTP with per-repository credentials.
export { startGitServer } from './server.js';
export type { BasicCredential, CreateRepositoryOptions, GitRequestRecord, GitServer } from './server.js';
export { TestRepository } from './repository.js';
export type { CommitOptions, FileContent } from './repository.js';
export { git as runTestGit, GitCommandError } from './git-command.js';
export { generateSshKeyPair } from './ssh-transport.js';
export type { SshKeyPair, SshRequestRecord } from './ssh-transport.js';
