import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readBounded } from './webhook-route.js';

describe('readBounded', () => {
  it('reads a body within the bound', async () => {
    const body = await readBounded(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), 4);
    expect(body).toEqual(Buffer.from('abcd'));
  });

  it('stops and destroys the stream past the bound (a chunked body that declared no length)', async () => {
    const stream = new PassThrough();
    const read = readBounded(stream, 4);
    stream.write(Buffer.from('abc'));
    stream.write(Buffer.from('de'));
    expect(await read).toBe('too-large');
    expect(stream.destroyed).toBe(true);
  });

  it('cuts off a body that is too slow', async () => {
    const stream = new PassThrough();
    stream.write(Buffer.from('a'));
    expect(await readBounded(stream, 10, 50)).toBe('timeout');
    expect(stream.destroyed).toBe(true);
  });

  it('passes a stream error on', async () => {
    const stream = new PassThrough();
    const read = readBounded(stream, 10);
    stream.destroy(new Error('reset'));
    await expect(read).rejects.toThrow('reset');
  });
});
