// @capstan/proto: the gRPC contracts (generated from proto/ by ts-proto; see README) and the few
// helpers every client and server of them needs.
export * from './gen/index.js';
export { unary, bearer } from './unary.js';
export type { UnaryMethod, UnaryOptions } from './unary.js';
export { FIELD_VIOLATIONS_KEY, fieldViolationsMetadata, fieldViolationsOf } from './field-violations.js';
