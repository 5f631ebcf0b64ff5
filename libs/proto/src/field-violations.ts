// Invalid requests are refused with the path of each invalid field. Over gRPC the violations travel
// in a binary trailer holding a capstan.api.v1.BadRequest, next to a readable status message.
import { Metadata } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { BadRequest } from './gen/capstan/api/v1/meta.js';
import type { FieldViolation } from './gen/capstan/api/v1/meta.js';

export const FIELD_VIOLATIONS_KEY = 'capstan-field-violations-bin';

export function fieldViolationsMetadata(violations: FieldViolation[]): Metadata {
  const md = new Metadata();
  md.set(FIELD_VIOLATIONS_KEY, Buffer.from(BadRequest.encode({ fieldViolations: violations }).finish()));
  return md;
}

/** The field violations a failed call carried, or [] when it carried none. */
export function fieldViolationsOf(err: Pick<ServiceError, 'metadata'> | undefined): FieldViolation[] {
  const raw = err?.metadata?.get(FIELD_VIOLATIONS_KEY)[0];
  if (!raw || typeof raw === 'string') return [];
  return BadRequest.decode(raw).fieldViolations;
}
