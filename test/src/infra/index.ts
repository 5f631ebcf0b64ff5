export { createTestDatabase, postgresServerUrl, type TestDatabase } from './postgres.js';
export { createTestBus, natsServerUrl, type BusCredentials, type TestBus, type TestBusUser } from './nats.js';
export { natsTestServer, TEST_EXT_SOURCES, type NatsServer } from './nats-server.js';
export { dockerAvailable } from './docker.js';
export { testPki, SERVICES, type TestPki, type ServiceName } from './pki.js';
export { makeServicePki, pkiFiles, type ServicePki, type ServiceCertFiles } from './service-pki.js';
export { loggedPort, runServiceToExit, startServiceProcess, type ServiceProcess } from './service-process.js';
export {
  browserLogin,
  DEX_CLIENT_SECRET,
  DEX_PASSWORD,
  dexConfig,
  freePort,
  startDex,
  type Dex,
  type DexUser,
} from './dex.js';
export { obtainedTool } from './tools.js';
