// The matcher against an independent reference: random patterns and texts (fixed seed, so the
// test is deterministic), each pattern also translated to an anchored RegExp by hand. Catches a
// fast path or the dynamic programme disagreeing with what the pattern means.
import { describe, expect, it } from 'vitest';
import { compileGlob } from './glob.js';

function prng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

const pieces: Array<[glob: string, regex: string]> = [
  ['a', 'a'],
  ['b', 'b'],
  ['/', '/'],
  ['.', '\\.'],
  ['*', '[\\s\\S]*'],
  ['**', '[\\s\\S]*'],
  ['?', '[\\s\\S]'],
  ['[ab]', '[ab]'],
  ['[!a]', '[^a]'],
  ['[a-b]', '[a-b]'],
  ['{a,b/}', '(?:a|b/)'],
  ['{,.}', '(?:|\\.)'],
];

function reference(glob: string): RegExp {
  return new RegExp(`^${glob}$`, 'u');
}

describe('the glob matcher agrees with a hand-translated RegExp', () => {
  it('given 3,000 random patterns and 20 random texts each, when matched, then both agree every time', () => {
    const rand = prng(42);
    const alphabet = ['a', 'b', '/', '.', 'c'];
    let checked = 0;
    for (let p = 0; p < 3_000; p++) {
      const n = 1 + Math.floor(rand() * 6);
      let glob = '';
      let regex = '';
      for (let i = 0; i < n; i++) {
        const [g, r] = pieces[Math.floor(rand() * pieces.length)]!;
        glob += g;
        regex += r;
      }
      const compiled = compileGlob(glob);
      const ref = reference(regex);
      for (let t = 0; t < 20; t++) {
        const len = Math.floor(rand() * 8);
        let text = '';
        for (let i = 0; i < len; i++) text += alphabet[Math.floor(rand() * alphabet.length)];
        expect(compiled.match(text), `pattern ${JSON.stringify(glob)} on ${JSON.stringify(text)}`).toBe(
          ref.test(text),
        );
        checked++;
      }
    }
    expect(checked).toBe(60_000);
  });

  it('given "/" as a separator, when matched, then * and ? never cross it but ** does', () => {
    const rand = prng(7);
    const sepPieces: Array<[string, string]> = [
      ['a', 'a'],
      ['/', '/'],
      ['*', '[^/]*'],
      ['**', '[\\s\\S]*'],
      ['?', '[^/]'],
    ];
    for (let p = 0; p < 1_000; p++) {
      const n = 1 + Math.floor(rand() * 5);
      let glob = '';
      let regex = '';
      for (let i = 0; i < n; i++) {
        const [g, r] = sepPieces[Math.floor(rand() * sepPieces.length)]!;
        // '*' followed by '*' would lex as '**': keep the generated meaning unambiguous
        if (g.startsWith('*') && glob.endsWith('*')) continue;
        glob += g;
        regex += r;
      }
      const compiled = compileGlob(glob, { separators: '/' });
      const ref = reference(regex);
      for (const text of ['', 'a', 'a/a', '/', 'aa/', '/a/a', 'a//a', 'aaa']) {
        expect(compiled.match(text), `pattern ${JSON.stringify(glob)} on ${JSON.stringify(text)}`).toBe(
          ref.test(text),
        );
      }
    }
  });
});
