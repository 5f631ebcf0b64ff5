// Compiled globs with Argo CD's semantics (see parse.ts for the syntax and the limits).
//
// Why not picomatch/minimatch: they are path matchers (`*` stops at `/`, dotfiles are special,
// malformed patterns silently become literals) and they backtrack (minimatch took minutes on
// `*a*a*a*a*a*a*a*a*a*a*a*b` against 60 characters), while Argo CD matches RBAC objects,
// destinations and destinationServiceAccounts with gobwas/glob *without* separators, and Capstan
// must treat a pattern that does not compile as an error. Why not RegExp: patterns are
// tenant-controlled, and a backtracking regex turns `*a*a*a*a*b` into a denial of service.
//
// The general matcher is a dynamic programme over the pattern's units (dp[j]: the first j units
// match the text read so far), run bit-parallel: 32 units per machine word, one pass over the
// words per character of the text, no backtracking. `{a,b}` groups are expanded into alternatives
// of the whole pattern, at most GLOB_LIMITS.maxAlternatives of them and GLOB_LIMITS.maxExpandedUnits
// units in all, so a match costs at most maxExpandedUnits / 32 word operations per character,
// whatever the pattern (measured in bench/src/glob.bench.ts).
//
// Hot path: most real patterns are a literal, `*`, `prefix*`, `*suffix` or `prefix*suffix`; those
// compile to plain string comparisons.

import { GLOB_LIMITS, GlobSyntaxError, parseGlob, type GlobNode } from './parse.js';

export { GlobSyntaxError, GLOB_LIMITS };

export interface GlobOptions {
  /** Characters `*` and `?` never match (`**` does). Argo CD uses none, except '/' for sourceRepos. */
  readonly separators?: string;
}

export interface Glob {
  readonly pattern: string;
  /** State bits of the matcher (units and alternatives after expansion): a match costs size / 32 word operations per character at most. */
  readonly size: number;
  match(text: string): boolean;
}

/** The most alternatives a pattern's `{...}` groups may expand to (`{a,b}{c,d,e}` has 6). */
export const MAX_ALTERNATIVES = GLOB_LIMITS.maxAlternatives;

type Unit =
  | { readonly t: 'char'; readonly c: number }
  | { readonly t: 'star'; readonly crossesSeparators: boolean }
  | { readonly t: 'single' }
  | { readonly t: 'set'; readonly chars: ReadonlySet<number>; readonly not: boolean }
  | { readonly t: 'range'; readonly lo: number; readonly hi: number; readonly not: boolean };

type Matcher = (text: string) => boolean;

/** Compiles a pattern; throws GlobSyntaxError when it does not compile or exceeds GLOB_LIMITS. */
export function compileGlob(pattern: string, options: GlobOptions = {}): Glob {
  const separators = separatorSet(options);
  const alternatives = alternativesOf(pattern, separators);
  const fast = alternatives.map(fastMatcher);
  let match: Matcher;
  if (fast.every((m) => m !== undefined)) {
    match = fast.length === 1 ? fast[0]! : (text) => fast.some((m) => m!(text));
  } else {
    match = bitMatcher(alternatives, separators).match;
  }
  return { pattern, size: alternatives.reduce((n, a) => n + a.length + 1, 0), match };
}

function separatorSet(options: GlobOptions): ReadonlySet<number> {
  return new Set(Array.from(options.separators ?? '', (c) => c.codePointAt(0)!));
}

function alternativesOf(pattern: string, separators: ReadonlySet<number>): Unit[][] {
  const alternatives = expand(parseGlob(pattern), pattern).map((nodes) => toUnits(nodes, separators));
  const units = alternatives.reduce((n, a) => n + a.length, 0);
  if (units > GLOB_LIMITS.maxExpandedUnits) {
    throw new GlobSyntaxError(
      pattern,
      `expands to more than ${GLOB_LIMITS.maxExpandedUnits} characters and wildcards in all`,
    );
  }
  return alternatives;
}

const cache = new Map<string, Glob>();
const CACHE_LIMIT = 10_000;

/** compileGlob with a bounded cache, for callers that match ad hoc rather than precompiling. */
export function cachedGlob(pattern: string, options: GlobOptions = {}): Glob {
  const key = `${options.separators ?? ''}\u0000${pattern}`;
  let glob = cache.get(key);
  if (glob === undefined) {
    glob = compileGlob(pattern, options);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, glob);
  }
  return glob;
}

/** Matches text against pattern; throws GlobSyntaxError when the pattern does not compile. */
export function globMatch(pattern: string, text: string, options: GlobOptions = {}): boolean {
  return cachedGlob(pattern, options).match(text);
}

/**
 * For tests and benchmarks: the general matcher's answer (fast paths bypassed), the machine words
 * of its state (over all alternatives) and the words it processed. `steps <= 2 × words × (characters
 * + 1)` is the linear bound, asserted structurally instead of with a clock.
 */
export function matchCountingSteps(
  pattern: string,
  text: string,
  options: GlobOptions = {},
): { matched: boolean; words: number; steps: number } {
  const matcher = bitMatcher(alternativesOf(pattern, separatorSet(options)), separatorSet(options));
  const matched = matcher.match(text);
  return { matched, words: matcher.words, steps: matcher.steps() };
}

/** The `{...}` groups of a parsed pattern expanded into whole-pattern alternatives (bounded). */
export function expand(nodes: readonly GlobNode[], pattern: string): GlobNode[][] {
  let results: GlobNode[][] = [[]];
  for (const node of nodes) {
    if (node.kind !== 'anyOf') {
      for (const r of results) r.push(node);
      continue;
    }
    const options = node.alternatives.flatMap((alt) => expand(alt, pattern));
    if (results.length * options.length > MAX_ALTERNATIVES) {
      throw new GlobSyntaxError(pattern, `expands to more than ${MAX_ALTERNATIVES} alternatives`);
    }
    const next: GlobNode[][] = [];
    for (const r of results) for (const o of options) next.push([...r, ...o]);
    results = next;
  }
  return results;
}

function toUnits(nodes: readonly GlobNode[], separators: ReadonlySet<number>): Unit[] {
  const units: Unit[] = [];
  for (const node of nodes) {
    switch (node.kind) {
      case 'text':
        for (const ch of node.text) units.push({ t: 'char', c: ch.codePointAt(0)! });
        break;
      case 'any':
      case 'super': {
        const crossesSeparators = node.kind === 'super' || separators.size === 0;
        const prev = units[units.length - 1];
        // `**` next to `*` (or `* *`) is one star that crosses separators if either does
        if (prev?.t === 'star') {
          units[units.length - 1] = {
            t: 'star',
            crossesSeparators: prev.crossesSeparators || crossesSeparators,
          };
        } else {
          units.push({ t: 'star', crossesSeparators });
        }
        break;
      }
      case 'single':
        units.push({ t: 'single' });
        break;
      case 'list':
        units.push({ t: 'set', chars: new Set(node.chars), not: node.not });
        break;
      case 'range':
        units.push({ t: 'range', lo: node.lo, hi: node.hi, not: node.not });
        break;
      case 'anyOf':
        throw new Error('unreachable: alternatives are expanded before');
    }
  }
  return units;
}

function literal(units: readonly Unit[]): string | undefined {
  let s = '';
  for (const u of units) {
    if (u.t !== 'char') return undefined;
    s += String.fromCodePoint(u.c);
  }
  return s;
}

/** Plain string comparisons for a literal, or literals around one star that crosses everything. */
function fastMatcher(units: readonly Unit[]): Matcher | undefined {
  const whole = literal(units);
  if (whole !== undefined) return (text) => text === whole;
  const stars = units.filter((u) => u.t === 'star');
  if (stars.length !== 1 || !stars[0]!.crossesSeparators) return undefined;
  const at = units.indexOf(stars[0]!);
  const prefix = literal(units.slice(0, at));
  const suffix = literal(units.slice(at + 1));
  if (prefix === undefined || suffix === undefined) return undefined;
  if (prefix === '' && suffix === '') return () => true;
  if (suffix === '') return (text) => text.startsWith(prefix);
  if (prefix === '') return (text) => text.endsWith(suffix);
  const min = prefix.length + suffix.length;
  return (text) => text.length >= min && text.startsWith(prefix) && text.endsWith(suffix);
}

function unitAccepts(u: Unit, c: number, separators: ReadonlySet<number>): boolean {
  switch (u.t) {
    case 'char':
      return u.c === c;
    case 'single':
      return !separators.has(c);
    case 'set':
      return u.chars.has(c) !== u.not;
    case 'range':
      return (c >= u.lo && c <= u.hi) !== u.not;
    case 'star':
      return u.crossesSeparators || !separators.has(c);
  }
}

interface BitMatcher {
  readonly words: number;
  match(text: string): boolean;
  /** Words processed by the last match. */
  steps(): number;
}

/** Masks per character: bit j of `advance` when unit j-1 (not a star) accepts it, of `stay` when unit j-1 is a star that does. */
interface Masks {
  readonly advance: Uint32Array;
  readonly stay: Uint32Array;
}

const MASK_CACHE_LIMIT = 64;

/**
 * State bits, one block per alternative: bit start+j of a block means the first j units of that
 * alternative match the text read so far. Per character, a non-star unit moves its state one bit
 * up, a star keeps its own, and reaching the state before a star reaches the star's (epsilon, one
 * step: adjacent stars are merged). A block's start bit is in no mask, so nothing shifts into it
 * from the block below. O((units + alternatives) / 32) word operations per character.
 */
function bitMatcher(alternatives: readonly Unit[][], separators: ReadonlySet<number>): BitMatcher {
  const bits = alternatives.reduce((n, a) => n + a.length + 1, 0);
  const words = ((bits - 1) >>> 5) + 1;
  const set = (v: Uint32Array, bit: number) => (v[bit >>> 5]! |= 1 << (bit & 31));
  const starts = new Uint32Array(words);
  const ends = new Uint32Array(words);
  const starAt = new Uint32Array(words);
  /** [bit of the state after the unit, unit] */
  const placed: Array<[number, Unit]> = [];
  let base = 0;
  for (const units of alternatives) {
    set(starts, base);
    units.forEach((u, i) => {
      placed.push([base + i + 1, u]);
      if (u.t === 'star') set(starAt, base + i + 1);
    });
    base += units.length;
    set(ends, base);
    base++;
  }
  const ascii: Array<Masks | undefined> = new Array<Masks | undefined>(128);
  const other = new Map<number, Masks>();
  const computeMasks = (c: number): Masks => {
    const advance = new Uint32Array(words);
    const stay = new Uint32Array(words);
    for (const [bit, u] of placed)
      if (unitAccepts(u, c, separators)) set(u.t === 'star' ? stay : advance, bit);
    return { advance, stay };
  };
  const masksFor = (c: number): Masks => {
    if (c < 128) return (ascii[c] ??= computeMasks(c));
    let k = other.get(c);
    if (k === undefined) {
      k = computeMasks(c);
      if (other.size >= MASK_CACHE_LIMIT) other.clear();
      other.set(c, k);
    }
    return k;
  };
  let d = new Uint32Array(words);
  let n = new Uint32Array(words);
  let steps = 0;

  /** v |= (v << 1) & starAt; returns whether any state is set. */
  const close = (v: Uint32Array): boolean => {
    let carry = 0;
    let any = 0;
    for (let w = 0; w < words; w++) {
      const cur = v[w]!;
      const next = cur | (((cur << 1) | carry) & starAt[w]!);
      v[w] = next;
      carry = cur >>> 31;
      any |= next;
    }
    steps += words;
    return any !== 0;
  };

  const match = (text: string): boolean => {
    steps = 0;
    d.set(starts);
    close(d);
    for (let i = 0; i < text.length; i++) {
      const c = text.codePointAt(i)!;
      if (c > 0xffff) i++;
      const { advance, stay } = masksFor(c);
      let carry = 0;
      for (let w = 0; w < words; w++) {
        const cur = d[w]!;
        n[w] = (((cur << 1) | carry) & advance[w]!) | (cur & stay[w]!);
        carry = cur >>> 31;
      }
      steps += words;
      if (!close(n)) return false;
      [d, n] = [n, d];
    }
    for (let w = 0; w < words; w++) if ((d[w]! & ends[w]!) !== 0) return true;
    return false;
  };
  return { words, match, steps: () => steps };
}
