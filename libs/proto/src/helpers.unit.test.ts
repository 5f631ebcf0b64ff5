// The hand-written helpers next to the generated code: the promise around a generated client's
// callback method (its deadline, metadata and error), the bearer metadata, and the field-violations
// trailer, encoded and decoded as a client sees it; all through the package's entry point.
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  FIELD_VIOLATIONS_KEY,
  bearer,
  fieldViolationsMetadata,
  fieldViolationsOf,
  unary,
  type UnaryMethod,
} from './index.js';

interface Call {
  request: string;
  metadata: Metadata;
  deadline: unknown;
}

/** A method of the generated clients' shape that answers at once and records how it was called. */
function method(answer: { err: ServiceError } | { res: number }): {
  fn: UnaryMethod<string, number>;
  calls: Call[];
} {
  const calls: Call[] = [];
  const fn: UnaryMethod<string, number> = (request, metadata, options, callback) => {
    calls.push({ request, metadata, deadline: options.deadline });
    if ('err' in answer) callback(answer.err, undefined as unknown as number);
    else callback(null, answer.res);
    return undefined as never;
  };
  return { fn, calls };
}

function serviceError(code: status, details: string, metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata });
}

describe('unary', () => {
  it("resolves with the method's response, passing the request and the caller's metadata", async () => {
    const { fn, calls } = method({ res: 42 });
    const md = bearer('t0k3n');
    await expect(unary(fn, 'req', { metadata: md })).resolves.toBe(42);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.request).toBe('req');
    expect(calls[0]!.metadata).toBe(md);
  });

  it('sets a deadline timeoutMs from the call, 30 s unless told', async () => {
    const { fn, calls } = method({ res: 1 });
    const before = Date.now();
    await unary(fn, 'a', { timeoutMs: 1_500 });
    await unary(fn, 'b');
    const after = Date.now();
    const [told, byDefault] = calls.map((c) => c.deadline);
    expect(told).toBeInstanceOf(Date);
    expect((told as Date).getTime()).toBeGreaterThanOrEqual(before + 1_500);
    expect((told as Date).getTime()).toBeLessThanOrEqual(after + 1_500);
    expect((byDefault as Date).getTime()).toBeGreaterThanOrEqual(before + 30_000);
    expect((byDefault as Date).getTime()).toBeLessThanOrEqual(after + 30_000);
    // Without the caller's metadata, the call carries empty metadata of its own.
    expect(calls[1]!.metadata.getMap()).toEqual({});
  });

  it("rejects with the method's ServiceError as it came (code, details, trailers)", async () => {
    const err = serviceError(status.PERMISSION_DENIED, 'not yours');
    const { fn } = method({ err });
    await expect(unary(fn, 'req')).rejects.toBe(err);
  });
});

describe('bearer', () => {
  it('carries the token as an authorization header', () => {
    expect(bearer('abc').get('authorization')).toEqual(['Bearer abc']);
  });
});

describe('field violations', () => {
  const violations = [
    { field: 'spec.destinationServiceAccounts[2].namespace', description: 'must not be empty' },
    { field: 'metadata.name', description: 'must be a DNS-1123 subdomain' },
  ];

  it('travel in a binary trailer and come back as they were sent, in order', () => {
    const md = fieldViolationsMetadata(violations);
    expect(md.get(FIELD_VIOLATIONS_KEY)[0]).toBeInstanceOf(Buffer);
    const err = serviceError(status.INVALID_ARGUMENT, 'invalid request', md);
    expect(fieldViolationsOf(err)).toEqual(violations);
  });

  it('are none when the error carried no trailer, or there was no error', () => {
    expect(fieldViolationsOf(serviceError(status.INTERNAL, 'boom'))).toEqual([]);
    expect(fieldViolationsOf({ metadata: fieldViolationsMetadata([]) })).toEqual([]);
    expect(fieldViolationsOf(undefined)).toEqual([]);
  });
});
