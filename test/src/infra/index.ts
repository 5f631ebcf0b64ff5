export { createTestDatabase, postgresServerUrl, type TestDatabase } from './postgres.js';
export { createTestBus, natsServerUrl, type TestBus } from './nats.js';
export { dockerAvailable } from './docker.js';
