// A response whose wire form is already known, for the read paths where building messages per call
// is the cost: `app list` splices each application's encoding, made once per version, instead of
// building and encoding a hundred messages on every call. The transports send these bytes as they are.
export class EncodedResponse {
  constructor(
    /** The protobuf encoding of the operation's response message. */
    readonly proto: () => Buffer,
    /** The proto JSON mapping of the same response, as the HTTP face sends it. */
    readonly json: () => string,
  ) {}
}

/** Bytes of a protobuf base-128 varint. */
function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n >>>= 7;
    size++;
  }
  return size;
}

function writeVarint(out: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  return at;
}

/**
 * The encoding of a message whose fields are length-delimited values (embedded messages, strings),
 * in field order, each given already encoded. An absent field is `undefined`; a repeated field is an
 * array. This is byte for byte what ts-proto's encode writes (tag, length, bytes per value).
 */
export function spliceMessage(fields: readonly { field: number; values: readonly Buffer[] }[]): Buffer {
  let size = 0;
  for (const { field, values } of fields) {
    const tagSize = varintSize((field << 3) | 2);
    for (const v of values) size += tagSize + varintSize(v.length) + v.length;
  }
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const { field, values } of fields) {
    const tag = (field << 3) | 2;
    for (const v of values) {
      at = writeVarint(out, at, tag);
      at = writeVarint(out, at, v.length);
      at += v.copy(out, at);
    }
  }
  return out;
}
