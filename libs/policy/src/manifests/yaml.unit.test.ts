import { describe, expect, it } from 'vitest';
import { ManifestError } from '../issues.js';
import { DEFAULT_YAML_LIMITS, readYamlDocuments } from './yaml.js';

/** The classic "billion laughs": nine levels of nine aliases each, ~387 million strings once expanded. */
const BILLION_LAUGHS = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...'bcdefghi'.split('').map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`),
].join('\n');

describe('readYamlDocuments', () => {
  it('reads every document, index from 1', () => {
    const docs = readYamlDocuments('a: 1\n---\nb: [x]\n', 'f');
    expect(docs).toEqual([
      { index: 1, value: { a: 1 } },
      { index: 2, value: { b: ['x'] } },
    ]);
  });

  it('refuses an alias bomb with a clear message, without expanding it', () => {
    const docs = readYamlDocuments(`ok: 1\n---\n${BILLION_LAUGHS}\n`, 'f');
    expect(docs[0]).toEqual({ index: 1, value: { ok: 1 } });
    expect(docs[1]?.issues?.[0]?.message).toBe(
      'invalid YAML: aliases expand more than 100 times (refused as a possible alias bomb)',
    );
  });

  it('keeps ordinary aliases working', () => {
    const docs = readYamlDocuments('base: &b {x: 1}\nuse: *b\n', 'f');
    expect(docs[0]?.value).toEqual({ base: { x: 1 }, use: { x: 1 } });
  });

  it('refuses deep nesting, NUL and oversized text', () => {
    const deep = readYamlDocuments('['.repeat(100) + ']'.repeat(100), 'f');
    expect(deep[0]?.issues?.[0]?.message).toMatch(/nested deeper than 64 levels/);
    const veryDeep = readYamlDocuments('['.repeat(200_000), 'f');
    expect(veryDeep[0]?.issues?.length).toBeGreaterThan(0);
    const nul = readYamlDocuments('metadata:\n  name: "a\\0b"\n', 'f');
    expect(nul[0]?.issues).toEqual([
      { path: 'metadata.name', message: 'value must not contain NUL (U+0000)' },
    ]);
    expect(() => readYamlDocuments('x'.repeat(20), 'f', { ...DEFAULT_YAML_LIMITS, maxBytes: 10 })).toThrow(
      ManifestError,
    );
  });
});
