// Properties of the engine, with fast-check:
// - on small inputs, the matcher answers what a reference oracle (the pattern translated token by
//   token into an anchored RegExp) answers, with and without '/' as separator;
// - on large inputs (patterns up to the 64-star limit with ?, [...], {a,b}; texts up to 4 KiB)
//   the work is bounded by the matcher's state size × the text length. The bound is asserted on the
//   count of state words the matcher processed, never on a clock.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileGlob, GLOB_LIMITS, matchCountingSteps } from './glob.js';

type Token =
  | { t: 'lit'; ch: string }
  | { t: 'star' }
  | { t: 'super' }
  | { t: 'single' }
  | { t: 'set'; not: boolean }
  | { t: 'range'; not: boolean }
  | { t: 'group'; alternatives: Token[][] };

const ALPHABET = ['a', 'b', '/', '.'];
const escapeRe = (ch: string) => ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const lit = fc.constantFrom(...ALPHABET).map((ch): Token => ({ t: 'lit', ch }));
const simple = fc.oneof(
  { weight: 4, arbitrary: lit },
  { weight: 2, arbitrary: fc.constant<Token>({ t: 'star' }) },
  { weight: 1, arbitrary: fc.constant<Token>({ t: 'super' }) },
  { weight: 1, arbitrary: fc.constant<Token>({ t: 'single' }) },
  { weight: 1, arbitrary: fc.boolean().map((not): Token => ({ t: 'set', not })) },
  { weight: 1, arbitrary: fc.boolean().map((not): Token => ({ t: 'range', not })) },
);
const { token } = fc.letrec<{ token: Token; sequence: Token[] }>((tie) => ({
  token: fc.oneof(
    { maxDepth: 2, depthIdentifier: 'group', withCrossShrink: true },
    simple,
    fc
      .array(tie('sequence'), { minLength: 1, maxLength: 3 })
      .map((alternatives): Token => ({ t: 'group', alternatives })),
  ),
  sequence: fc.array(tie('token'), { maxLength: 3 }),
}));

function toGlob(tokens: readonly Token[]): string {
  return tokens
    .map((k) => {
      switch (k.t) {
        case 'lit':
          return k.ch;
        case 'star':
          return '*';
        case 'super':
          return '**';
        case 'single':
          return '?';
        case 'set':
          return k.not ? '[!ab]' : '[ab]';
        case 'range':
          return k.not ? '[!a-b]' : '[a-b]';
        case 'group':
          return `{${k.alternatives.map(toGlob).join(',')}}`;
      }
    })
    .join('');
}

/** The oracle: each token as a RegExp piece. Adjacent stars lex as one `**` run (gobwas). */
function toRegex(tokens: readonly Token[], sep: boolean): string {
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    const k = tokens[i]!;
    if (k.t === 'star' || k.t === 'super') {
      let j = i;
      while (j + 1 < tokens.length && (tokens[j + 1]!.t === 'star' || tokens[j + 1]!.t === 'super')) j++;
      const crosses = !sep || j > i || k.t === 'super';
      out += crosses ? '[\\s\\S]*' : '[^/]*';
      i = j;
      continue;
    }
    switch (k.t) {
      case 'lit':
        out += escapeRe(k.ch);
        break;
      case 'single':
        out += sep ? '[^/]' : '[\\s\\S]';
        break;
      case 'set':
        out += k.not ? '[^ab]' : '[ab]';
        break;
      case 'range':
        out += k.not ? '[^a-b]' : '[a-b]';
        break;
      case 'group':
        out += `(?:${k.alternatives.map((a) => toRegex(a, sep)).join('|')})`;
        break;
    }
  }
  return out;
}

/** How many alternatives the groups expand to (the engine refuses more than 64). */
function expansions(tokens: readonly Token[]): number {
  return tokens.reduce(
    (n, k) => (k.t === 'group' ? n * k.alternatives.reduce((a, alt) => a + expansions(alt), 0) : n),
    1,
  );
}

const smallText = fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 10 });

describe('the matcher agrees with a RegExp oracle on small inputs', () => {
  it.each([
    ['no separators (RBAC, destinations)', false],
    ['"/" as separator (sourceRepos)', true],
  ] as const)('given random patterns and texts, %s, when matched, then both agree', (_, sep) => {
    fc.assert(
      fc.property(
        fc.array(token, { maxLength: 8 }),
        fc.array(smallText, { maxLength: 10 }),
        (tokens, texts) => {
          fc.pre(expansions(tokens) <= GLOB_LIMITS.maxAlternatives);
          const glob = compileGlob(toGlob(tokens), sep ? { separators: '/' } : {});
          const oracle = new RegExp(`^${toRegex(tokens, sep)}$`, 'u');
          for (const text of texts) {
            expect(glob.match(text), `${glob.pattern} on ${JSON.stringify(text)}`).toBe(oracle.test(text));
            // the general matcher, fast paths bypassed, answers the same
            expect(matchCountingSteps(glob.pattern, text, sep ? { separators: '/' } : {}).matched).toBe(
              oracle.test(text),
            );
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

/** A large pattern within the limits: up to 64 stars, each followed by a few other tokens. */
const largePattern = fc
  .array(
    fc.tuple(
      fc.constantFrom<Token>({ t: 'star' }, { t: 'super' }),
      fc.array(
        fc.oneof(
          simple.filter((k) => k.t !== 'star' && k.t !== 'super'),
          groupOfTwo(),
        ),
        {
          maxLength: 4,
        },
      ),
    ),
    { maxLength: GLOB_LIMITS.maxStars, size: 'max' },
  )
  .map((segments) => {
    let groups = 0;
    let pattern = '';
    for (const [star, rest] of segments) {
      // stay within the alternatives limit: groups beyond it become a literal
      const tokens = [
        star,
        ...rest.map((k): Token => (k.t === 'group' && ++groups > 2 ? { t: 'lit', ch: 'a' } : k)),
      ];
      const segment = toGlob(tokens);
      // and within the length limit (a star right after a star makes "**": the same star count)
      if (pattern.length + segment.length > GLOB_LIMITS.maxLength) break;
      pattern += segment;
    }
    return pattern;
  });

function groupOfTwo(): fc.Arbitrary<Token> {
  return fc
    .tuple(fc.array(lit, { maxLength: 3 }), fc.array(lit, { maxLength: 3 }))
    .map(([a, b]): Token => ({ t: 'group', alternatives: [a, b] }));
}

// Mostly 'a' so that long partial matches keep many states alive (the backtracking worst case).
const largeText = fc.string({
  unit: fc.oneof({ weight: 8, arbitrary: fc.constant('a') }, fc.constantFrom('b', '/', '.')),
  maxLength: 4096,
  size: 'max',
});

describe('the work is linear in pattern × text, whatever the pattern', () => {
  it('given random patterns of up to 64 stars and texts of up to 4 KiB, when matched, then the processed state words stay within 2 × state words × (text + 1)', () => {
    fc.assert(
      fc.property(largePattern, largeText, fc.boolean(), (pattern, text, sep) => {
        const options = sep ? { separators: '/' } : {};
        const { matched, words, steps } = matchCountingSteps(pattern, text, options);
        expect(steps).toBeLessThanOrEqual(2 * words * (text.length + 1));
        expect(words).toBeLessThanOrEqual(GLOB_LIMITS.maxAlternatives + GLOB_LIMITS.maxExpandedUnits / 32);
        expect(compileGlob(pattern, options).match(text)).toBe(matched);
      }),
      { numRuns: 60 },
    );
  });

  it.each([
    ['*a'.repeat(11) + '*b', 'a'.repeat(4096)],
    ['*a'.repeat(63) + '*b', 'a'.repeat(4096)],
    ['*{a,aa}'.repeat(2) + '*a'.repeat(61) + '*b', 'a'.repeat(4096)],
    ['*?'.repeat(63) + '*b', 'a'.repeat(4096)],
    ['*[!b]'.repeat(63) + '*b', 'a'.repeat(4096)],
  ])(
    'given the pathological %s against 4 KiB of "a", when matched, then it refuses within the bound',
    (pattern, text) => {
      const { matched, words, steps } = matchCountingSteps(pattern, text);
      expect(matched).toBe(false);
      expect(steps).toBeLessThanOrEqual(2 * words * (text.length + 1));
      const { matched: withB } = matchCountingSteps(pattern, `${text}b`);
      expect(withB).toBe(true);
    },
  );
});
