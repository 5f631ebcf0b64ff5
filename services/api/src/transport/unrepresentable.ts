// gRPC carries Argo CD objects as capstan.api.v1 messages, which do not have every Argo CD field
// (syncWindows, helm parameters, ignoreDifferences, ...). So that a get-modify-update over gRPC (what
// `capstan proj add-destination` does) never drops them, an update through gRPC keeps the stored
// object's fields that the message cannot represent. HTTP carries whole manifests and needs none of this.
import type { MessageCodec } from './operation.js';

type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** The parts of `stored` that do not survive a round trip through the message. */
export function unrepresentable(stored: Json, representable: Json): Json {
  if (isObject(stored)) {
    const r = isObject(representable) ? representable : {};
    const out: Record<string, Json> = {};
    for (const [k, v] of Object.entries(stored)) {
      if (!(k in r)) out[k] = v;
      else {
        const sub = unrepresentable(v, r[k]);
        if (sub !== undefined) out[k] = sub;
      }
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (Array.isArray(stored) && Array.isArray(representable) && stored.length === representable.length) {
    const items = stored.map((v, i) => unrepresentable(v, representable[i]));
    return items.some((x) => x !== undefined) ? items : undefined;
  }
  return undefined;
}

/** `incoming` with `extra` added where `incoming` says nothing (incoming wins on every field it has). */
export function mergeUnder(extra: Json, incoming: Json): Json {
  if (extra === undefined) return incoming;
  if (isObject(extra) && isObject(incoming)) {
    const out: Record<string, Json> = { ...incoming };
    for (const [k, v] of Object.entries(extra)) out[k] = k in incoming ? mergeUnder(v, incoming[k]) : v;
    return out;
  }
  if (Array.isArray(extra) && Array.isArray(incoming) && extra.length === incoming.length) {
    return incoming.map((v, i) => mergeUnder(extra[i], v));
  }
  return incoming;
}

/** The incoming manifest completed with what the stored one holds beyond the message's reach. */
export function keepUnrepresentable(
  codec: MessageCodec,
  stored: Json,
  incoming: Record<string, Json>,
): Record<string, Json> {
  const representable = codec.toJSON(codec.fromJSON(stored) as never);
  return mergeUnder(unrepresentable(stored, representable), incoming) as Record<string, Json>;
}
