import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@capstan/service';
import { assertNever } from './define.js';
import {
  counterIncremented,
  counterPing,
  increment,
  type CounterIncremented,
} from '../test-support/counter.js';
import type { EventOf } from './define.js';

type Counted = CounterIncremented | EventOf<typeof counterPing>;

const describeEvent = (event: Counted): string => {
  switch (event.type) {
    case counterIncremented.type:
      return `by ${event.data.by}`;
    case counterPing.type:
      return `ping ${event.data.n}`;
    default:
      return assertNever(event);
  }
};

const forgetful = (event: Counted): string => {
  switch (event.type) {
    case counterIncremented.type:
      return 'incremented';
    default:
      // @ts-expect-error a union member is not handled: the switch does not compile
      return assertNever(event);
  }
};

describe('assertNever', () => {
  it('narrows each case to its data and refuses, as an invalid argument, what the union does not hold', () => {
    expect(describeEvent(increment('c/1', 3))).toBe('by 3');
    const stranger = { ...increment('c/1'), type: 'io.capstan.counter.unknown.v1' } as unknown as Counted;
    expect(() => describeEvent(stranger)).toThrow(InvalidArgumentError);
    expect(() => describeEvent(stranger)).toThrow('unexpected event io.capstan.counter.unknown.v1');
    expect(forgetful(increment('c/1'))).toBe('incremented');
  });
});
