export * from './subjects.js';
export * from './permissions.js';
export * from './nats-config.js';
