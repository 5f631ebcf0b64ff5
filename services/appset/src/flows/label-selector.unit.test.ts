import { describe, expect, it } from 'vitest';
import { selectorMatches } from '@capstan/appset-engine';
import { parseLabelSelector } from './label-selector.js';

const matches = (selector: string, labels: Record<string, string>) =>
  selectorMatches(parseLabelSelector(selector), labels);

describe('label selector strings', () => {
  it('reads equality, inequality, set and existence requirements as kubectl does', () => {
    expect(matches('team=a', { team: 'a' })).toBe(true);
    expect(matches('team==a,env!=prod', { team: 'a', env: 'dev' })).toBe(true);
    expect(matches('team=a,env!=prod', { team: 'a', env: 'prod' })).toBe(false);
    expect(matches('env in (dev, staging),team', { env: 'staging', team: 'x' })).toBe(true);
    expect(matches('env notin (dev,staging)', { env: 'dev' })).toBe(false);
    expect(matches('!legacy', { legacy: 'yes' })).toBe(false);
    expect(matches('', {})).toBe(true);
  });

  it('refuses what is not a requirement, naming the field', () => {
    expect(() => parseLabelSelector('team=a=b')).toThrow(/selector/);
    expect(() => parseLabelSelector('a in b')).toThrow(/not a label requirement/);
  });
});
