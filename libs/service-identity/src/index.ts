export * from './service-tokens.js';
export * from './tls.js';
export * from './delegation.js';
export * from './server.js';
export * from './client.js';
export * from './grpc-errors.js';
export * from './server-settings.js';
