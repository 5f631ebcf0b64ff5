export {
  generateKeyringJson,
  KEY_BYTES,
  loadKeyring,
  parseKeyring,
  type Keyring,
  type KeyringSettings,
} from './keyring.js';
export {
  needsResealing,
  open,
  openJson,
  resealWithActiveKey,
  seal,
  sealJson,
  SealError,
  type Sealed,
} from './seal.js';
export { resealAtStartup, resealRows, resealTables, type SealedTable } from './reseal.js';
