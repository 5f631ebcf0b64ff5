import { describe, expect, it } from 'vitest';
import { decodeEvent } from './decode.js';
import { PoisonMessageError } from './errors.js';
import { increment, testCatalog } from '../test-support/counter.js';
import { defineEvent } from '../catalog/define.js';
import { z } from 'zod';

const bytes = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));

describe('decodeEvent', () => {
  it('accepts a catalog event and returns its typed data', () => {
    const e = increment('counters/a', 3);
    expect(decodeEvent(bytes(e), testCatalog)).toMatchObject({
      type: e.type,
      data: { by: 3 },
      actor: 'user:test',
    });
  });

  it.each([
    ['not json', '{nope', /message is not json/],
    ['no envelope', { hello: 'world' }, /not a capstan cloudevent: specversion/],
    [
      'unknown type',
      { ...increment('counters/a'), type: 'io.capstan.counter.vanished.v1' },
      /unknown event type io\.capstan\.counter\.vanished\.v1/,
    ],
    ['bad data', { ...increment('counters/a'), data: { by: -1 } }, /fails its schema: data\.by/],
  ])('refuses %s as poison with the reason', (_name, payload, reason) => {
    expect(() => decodeEvent(bytes(payload), testCatalog)).toThrow(PoisonMessageError);
    expect(() => decodeEvent(bytes(payload), testCatalog)).toThrow(reason);
  });

  it('derives subjects from types and refuses malformed types', () => {
    expect(
      defineEvent({ type: 'io.capstan.cmd.sync.request.v1', description: '', data: z.object({}) }).subject,
    ).toBe('cmd.sync.request');
    expect(
      defineEvent({ type: 'io.capstan.ext.git.push.v2', description: '', data: z.object({}) }).subject,
    ).toBe('ext.git.push');
    expect(() => defineEvent({ type: 'com.example.push', description: '', data: z.object({}) })).toThrow(
      /does not follow/,
    );
  });
});
