export * from './envelope/envelope.js';
export * from './catalog/define.js';
export * from './catalog/index.js';
export * from './bus/errors.js';
export { connectBus, type Bus, type BusOptions } from './bus/bus.js';
export type { StreamKind } from './bus/streams.js';
export { extSourceOf } from '@capstan/bus-auth';
export {
  type ConsumerOptions,
  type RunningConsumer,
  type DeadLetter,
  type DeadLetterStore,
  type MessageContext,
} from './bus/consumer.js';
export * from './outbox/event-store.table.js';
export {
  appendToStream,
  appendToStreams,
  readStream,
  readStreams,
  streamVersion,
  type StoredEvent,
} from './outbox/event-store.repository.js';
export {
  handleCommand,
  handleCommands,
  type BatchCommandOptions,
  type BatchResult,
  type CommandHandlerOptions,
  type CommandResult,
} from './outbox/command-handler.js';
export { startOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from './outbox/relay.js';
export { applyOnce, applyBatchOnce, type ApplyOnceOptions } from './consumers/apply-once.js';
export { postgresDeadLetters } from './consumers/dead-letters.js';
export {
  appliedSettingsMigration,
  readAppliedSettings,
  startAppliedSettingsConsumer,
} from './consumers/applied-settings.js';
export {
  listDeadLetters,
  parseDeadLetterId,
  startDeadLetterReplay,
  type DeadLetterQuery,
  type DeadLetterView,
} from './consumers/dead-letter-replay.js';
export { ConcurrencyError } from '@capstan/service';
export { startBackbone, type Backbone } from './backbone.js';
