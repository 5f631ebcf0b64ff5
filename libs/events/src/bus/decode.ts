// Turning bytes from the bus into a typed event of the catalog, or a precise reason why not.
import { envelopeSchema, type Envelope } from '../envelope/envelope.js';
import type { Catalog } from '../catalog/define.js';
import { PoisonMessageError } from './errors.js';

function describeIssues(prefix: string, issues: readonly { path: PropertyKey[]; message: string }[]): string {
  return issues
    .map((i) => `${[prefix, ...i.path.map(String)].filter(Boolean).join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}

export function decodeEvent(bytes: Uint8Array, catalog: Catalog): Envelope {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new PoisonMessageError('message is not json', { cause: err });
  }
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) {
    throw new PoisonMessageError(`not a capstan cloudevent: ${describeIssues('', envelope.error.issues)}`);
  }
  const definition = catalog.get(envelope.data.type);
  if (!definition) throw new PoisonMessageError(`unknown event type ${envelope.data.type}`);
  const data = definition.data.safeParse(envelope.data.data);
  if (!data.success) {
    throw new PoisonMessageError(
      `${envelope.data.type} fails its schema: ${describeIssues('data', data.error.issues)}`,
    );
  }
  return { ...envelope.data, data: data.data };
}
