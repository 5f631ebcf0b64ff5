export { createTestDatabase, postgresServerUrl, type TestDatabase } from './postgres.js';
export { createTestBus, natsServerUrl, type TestBus } from './nats.js';
export { dockerAvailable } from './docker.js';
export { testPki, SERVICES, type TestPki, type ServiceName } from './pki.js';
export { makeServicePki, pkiFiles, type ServicePki, type ServiceCertFiles } from './service-pki.js';
