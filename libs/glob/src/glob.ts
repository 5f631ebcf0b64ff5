// Compiled globs with Argo CD's semantics (see parse.ts for the syntax and the limits).
//
// Why not picomatch/minimatch: they are path matchers (`*` stops at `/`, dotfiles are special,
// malformed patterns silently become literals) and they backtrack (minimatch took minutes on
// `*a*a*a*a*a*a*a*a*a*a*a*b` against 60 characters), while Argo CD matches RBAC objects,
// destinations and destinationServiceAccounts with gobwas/glob *without* separators, and Capstan
// must treat a pattern that does not compile as an error. Why not RegExp: patterns are
// tenant-controlled, and a backtracking regex turns `*a*a*a*a*b` into a denial of service.
//
// The general matcher runs a Thompson NFA over a program compiled from the parse tree: every
// program instruction is visited at most once per character of the text, so a match costs
// O(program × text) whatever the pattern, and the program is linear in the pattern (`{a,b}`
// groups become branches, never expanded into alternatives of the whole pattern). With the
// limits of GLOB_LIMITS, a program has at most a few thousand instructions.
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
  match(text: string): boolean;
}

/** The most alternatives all `{...}` groups of one pattern may have together. */
export const MAX_ALTERNATIVES = GLOB_LIMITS.maxAlternatives;

type Op =
  | { readonly op: 'char'; readonly c: number }
  | { readonly op: 'single' }
  | { readonly op: 'set'; readonly chars: ReadonlySet<number>; readonly not: boolean }
  | { readonly op: 'range'; readonly lo: number; readonly hi: number; readonly not: boolean }
  /** Consumes a character and stays; also steps to the next instruction without consuming. */
  | { readonly op: 'star'; readonly crossesSeparators: boolean }
  /** Steps, without consuming, to every target (a `{...}` group's branches, or a jump). */
  | { op: 'split'; to: number[] }
  | { readonly op: 'match' };

type Matcher = (text: string) => boolean;

/** Compiles a pattern; throws GlobSyntaxError when it does not compile or exceeds GLOB_LIMITS. */
export function compileGlob(pattern: string, options: GlobOptions = {}): Glob {
  const separators = new Set(Array.from(options.separators ?? '', (c) => c.codePointAt(0)!));
  const nodes = parseGlob(pattern);
  return { pattern, match: fastMatcher(nodes, separators) ?? new Nfa(nodes, separators).matcher() };
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
 * For tests and benchmarks: the general matcher's answer, its program size and the instructions it
 * visited. `steps <= 2 × instructions × (characters + 1)` is the linear bound, asserted
 * structurally instead of with a clock.
 */
export function matchCountingSteps(
  pattern: string,
  text: string,
  options: GlobOptions = {},
): { matched: boolean; instructions: number; steps: number } {
  const separators = new Set(Array.from(options.separators ?? '', (c) => c.codePointAt(0)!));
  const nfa = new Nfa(parseGlob(pattern), separators);
  const matched = nfa.run(text);
  return { matched, instructions: nfa.size, steps: nfa.steps };
}

/** The literal a node sequence stands for, or undefined when it has anything but text. */
function literal(nodes: readonly GlobNode[]): string | undefined {
  let s = '';
  for (const n of nodes) {
    if (n.kind !== 'text') return undefined;
    s += n.text;
  }
  return s;
}

/** Plain string comparisons for a literal, or literals around one star that crosses everything. */
function fastMatcher(nodes: readonly GlobNode[], separators: ReadonlySet<number>): Matcher | undefined {
  const whole = literal(nodes);
  if (whole !== undefined) return (text) => text === whole;
  const stars = nodes.filter((n) => n.kind === 'any' || n.kind === 'super');
  if (stars.length !== 1) return undefined;
  if (stars[0]!.kind === 'any' && separators.size > 0) return undefined;
  const at = nodes.indexOf(stars[0]!);
  const prefix = literal(nodes.slice(0, at));
  const suffix = literal(nodes.slice(at + 1));
  if (prefix === undefined || suffix === undefined) return undefined;
  if (prefix === '' && suffix === '') return () => true;
  if (suffix === '') return (text) => text.startsWith(prefix);
  if (prefix === '') return (text) => text.endsWith(suffix);
  const min = prefix.length + suffix.length;
  return (text) => text.length >= min && text.startsWith(prefix) && text.endsWith(suffix);
}

class Nfa {
  private readonly prog: Op[] = [];
  private readonly separators: ReadonlySet<number>;
  // Work arrays, reused across matches (JavaScript runs one match at a time).
  private readonly seen: Int32Array;
  private current: Int32Array;
  private next: Int32Array;
  private readonly stack: Int32Array;
  private generation = 0;
  steps = 0;

  constructor(nodes: readonly GlobNode[], separators: ReadonlySet<number>) {
    this.separators = separators;
    this.emitSequence(nodes);
    this.prog.push({ op: 'match' });
    const n = this.prog.length;
    this.seen = new Int32Array(n);
    this.current = new Int32Array(n);
    this.next = new Int32Array(n);
    // every edge pushes at most once per closure: one per split target, one per star, the start
    this.stack = new Int32Array(2 * n + 1);
  }

  get size(): number {
    return this.prog.length;
  }

  matcher(): Matcher {
    return (text) => this.run(text);
  }

  private emitSequence(nodes: readonly GlobNode[]): void {
    let previousWasStar = false;
    for (const node of nodes) {
      const isStar = node.kind === 'any' || node.kind === 'super';
      if (isStar) {
        const crossesSeparators = node.kind === 'super' || this.separators.size === 0;
        // `**` next to `*` is one star that crosses separators if either does
        if (previousWasStar) {
          const prev = this.prog.pop() as { crossesSeparators: boolean };
          this.prog.push({ op: 'star', crossesSeparators: prev.crossesSeparators || crossesSeparators });
        } else {
          this.prog.push({ op: 'star', crossesSeparators });
        }
      } else {
        this.emitNode(node);
      }
      previousWasStar = isStar;
    }
  }

  private emitNode(node: GlobNode): void {
    switch (node.kind) {
      case 'text':
        for (const ch of node.text) this.prog.push({ op: 'char', c: ch.codePointAt(0)! });
        return;
      case 'single':
        this.prog.push({ op: 'single' });
        return;
      case 'list':
        this.prog.push({ op: 'set', chars: new Set(node.chars), not: node.not });
        return;
      case 'range':
        this.prog.push({ op: 'range', lo: node.lo, hi: node.hi, not: node.not });
        return;
      case 'anyOf': {
        const split: Op & { op: 'split' } = { op: 'split', to: [] };
        this.prog.push(split);
        const jumps: Array<Op & { op: 'split' }> = [];
        for (const alternative of node.alternatives) {
          split.to.push(this.prog.length);
          this.emitSequence(alternative);
          const jump: Op & { op: 'split' } = { op: 'split', to: [] };
          this.prog.push(jump);
          jumps.push(jump);
        }
        for (const jump of jumps) jump.to.push(this.prog.length);
        return;
      }
      case 'any':
      case 'super':
        throw new Error('unreachable: stars are emitted by emitSequence');
    }
  }

  /** Adds pc and everything reachable from it without consuming to `list`; returns the new length. */
  private close(pc: number, list: Int32Array, length: number): number {
    const { prog, seen, stack, generation } = this;
    let top = 0;
    stack[top++] = pc;
    while (top > 0) {
      const at = stack[--top]!;
      if (seen[at] === generation) continue;
      seen[at] = generation;
      this.steps++;
      const op = prog[at]!;
      if (op.op === 'split') {
        // reversed, so that branches are visited in order (the order does not change the answer)
        for (let i = op.to.length - 1; i >= 0; i--)
          if (seen[op.to[i]!] !== generation) stack[top++] = op.to[i]!;
        continue;
      }
      list[length++] = at;
      if (op.op === 'star' && seen[at + 1] !== generation) stack[top++] = at + 1;
    }
    return length;
  }

  private accepts(op: Op, c: number): boolean {
    switch (op.op) {
      case 'char':
        return op.c === c;
      case 'single':
        return !this.separators.has(c);
      case 'set':
        return op.chars.has(c) !== op.not;
      case 'range':
        return (c >= op.lo && c <= op.hi) !== op.not;
      case 'star':
        return op.crossesSeparators || !this.separators.has(c);
      case 'split':
      case 'match':
        return false;
    }
  }

  run(text: string): boolean {
    this.steps = 0;
    this.nextGeneration();
    let length = this.close(0, this.current, 0);
    for (const ch of text) {
      const c = ch.codePointAt(0)!;
      this.nextGeneration();
      let nextLength = 0;
      for (let i = 0; i < length; i++) {
        const pc = this.current[i]!;
        const op = this.prog[pc]!;
        this.steps++;
        if (this.accepts(op, c))
          nextLength = this.close(op.op === 'star' ? pc : pc + 1, this.next, nextLength);
      }
      if (nextLength === 0) return false;
      [this.current, this.next] = [this.next, this.current];
      length = nextLength;
    }
    const end = this.prog.length - 1;
    for (let i = 0; i < length; i++) if (this.current[i] === end) return true;
    return false;
  }

  private nextGeneration(): void {
    if (++this.generation === 0x7fffffff) {
      this.seen.fill(0);
      this.generation = 1;
    }
  }
}
