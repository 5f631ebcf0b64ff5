export { buildProgram } from './program.js';
export {
  connect,
  clientsFor,
  withConnection,
  globalOptions,
  type Connection,
  type GlobalOptions,
} from './client/connection.js';
