// Compiled globs with Argo CD's semantics (see parse.ts for the syntax).
//
// Why not picomatch/minimatch: they are path matchers (`*` stops at `/`, dotfiles are special,
// malformed patterns silently become literals), while Argo CD matches destinationServiceAccounts
// and destinations with gobwas/glob *without* separators, and Capstan must treat a pattern that
// does not compile as an error. Why not RegExp: self-service projects make patterns
// tenant-controlled, and a backtracking regex turns `*a*a*a*a*b` into a denial of service; the
// general matcher here is a dynamic programme, O(pattern × text), whatever the pattern.
//
// Hot path: most real patterns are a literal, `*`, `prefix*`, `*suffix` or `prefix*suffix`; those
// compile to plain string comparisons.

import { GlobSyntaxError, parseGlob, type GlobNode } from './parse.js';

export { GlobSyntaxError };

export interface GlobOptions {
  /** Characters `*` and `?` never match (`**` does). Argo CD uses none, except '/' for sourceRepos. */
  readonly separators?: string;
}

export interface Glob {
  readonly pattern: string;
  match(text: string): boolean;
}

/** Upper bound on `{a,b}` expansion, so a pattern cannot make compilation explode. */
export const MAX_ALTERNATIVES = 1024;

type Unit =
  | { readonly t: 'char'; readonly c: number }
  | { readonly t: 'star'; readonly crossesSeparators: boolean }
  | { readonly t: 'single' }
  | { readonly t: 'set'; readonly chars: ReadonlySet<number>; readonly not: boolean }
  | { readonly t: 'range'; readonly lo: number; readonly hi: number; readonly not: boolean };

type Matcher = (text: string) => boolean;

/** Compiles a pattern; throws GlobSyntaxError when it does not compile. */
export function compileGlob(pattern: string, options: GlobOptions = {}): Glob {
  const separators = new Set(Array.from(options.separators ?? '', (c) => c.codePointAt(0)!));
  const alternatives = expand(parseGlob(pattern), pattern).map((nodes) => toUnits(nodes, separators));
  const matchers = alternatives.map((units) => matcherFor(units, separators));
  const match: Matcher = matchers.length === 1 ? matchers[0]! : (text) => matchers.some((m) => m(text));
  return { pattern, match };
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

function expand(nodes: readonly GlobNode[], pattern: string): GlobNode[][] {
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

function matcherFor(units: readonly Unit[], separators: ReadonlySet<number>): Matcher {
  const whole = literal(units);
  if (whole !== undefined) return (text) => text === whole;

  // Fast paths for one free star (one that crosses everything) around literals.
  const stars = units.filter((u) => u.t === 'star');
  if (stars.length === 1 && (stars[0] as { crossesSeparators: boolean }).crossesSeparators) {
    const at = units.findIndex((u) => u.t === 'star');
    const prefix = literal(units.slice(0, at));
    const suffix = literal(units.slice(at + 1));
    if (prefix !== undefined && suffix !== undefined) {
      if (prefix === '' && suffix === '') return () => true;
      if (suffix === '') return (text) => text.startsWith(prefix);
      if (prefix === '') return (text) => text.endsWith(suffix);
      const min = prefix.length + suffix.length;
      return (text) => text.length >= min && text.startsWith(prefix) && text.endsWith(suffix);
    }
  }
  return generalMatcher(units, separators);
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

/** dp[j]: the first j units match the text read so far. O(units × characters), no backtracking. */
function generalMatcher(units: readonly Unit[], separators: ReadonlySet<number>): Matcher {
  const m = units.length;
  return (text) => {
    let dp = new Array<boolean>(m + 1).fill(false);
    let next = new Array<boolean>(m + 1).fill(false);
    dp[0] = true;
    for (let j = 1; j <= m && units[j - 1]!.t === 'star'; j++) dp[j] = true;
    for (const ch of text) {
      const c = ch.codePointAt(0)!;
      next[0] = false;
      let any = false;
      for (let j = 1; j <= m; j++) {
        const u = units[j - 1]!;
        const v =
          u.t === 'star'
            ? next[j - 1]! || (dp[j]! && unitAccepts(u, c, separators))
            : dp[j - 1]! && unitAccepts(u, c, separators);
        next[j] = v;
        any ||= v;
      }
      if (!any) return false;
      [dp, next] = [next, dp];
    }
    return dp[m]!;
  };
}
