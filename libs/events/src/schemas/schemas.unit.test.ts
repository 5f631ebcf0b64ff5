import { describe, expect, it } from 'vitest';
import { staleSchemaFiles } from './generate.js';

describe('generated JSON Schemas', () => {
  it('are up to date with the catalog (run npm run gen:schemas -w @capstan/events)', () => {
    expect(staleSchemaFiles()).toEqual([]);
  });
});
