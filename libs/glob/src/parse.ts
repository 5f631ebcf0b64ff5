// Parser for Argo CD's glob syntax (gobwas/glob, which Argo CD compiles patterns with).
//
// Syntax, as gobwas lexes it:
//   *        any run of characters (never crosses a separator, when separators are given)
//   **       any run of characters, separators included
//   ?        exactly one character (not a separator)
//   [abc]    one of the listed characters; [!abc] none of them
//   [a-z]    one character in the range; [!a-z] outside it (one range per bracket, as in gobwas)
//   {a,b}    any of the alternatives (nested groups allowed); `,` and `}` are literal outside a group
//   \x       the character x, literally
// Everything else is literal and case-sensitive.
//
// Capstan is stricter than gobwas v0.2.3 in two places, on purpose: an unclosed `{` and a
// trailing `\` are compile errors (gobwas silently closes the group / drops the backslash). A
// pattern whose meaning is a guess must not decide which identity a sync runs as.
//
// Limits (patterns are tenant input): at most GLOB_LIMITS.maxLength characters and maxStars
// `*`/`**` (checked here), at most maxAlternatives expanded alternatives of maxExpandedUnits units
// in all (checked in glob.ts); beyond them the pattern does not compile (GlobSyntaxError naming
// the limit).

export type GlobNode =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'any' }
  | { readonly kind: 'super' }
  | { readonly kind: 'single' }
  | { readonly kind: 'list'; readonly chars: readonly number[]; readonly not: boolean }
  | { readonly kind: 'range'; readonly lo: number; readonly hi: number; readonly not: boolean }
  | { readonly kind: 'anyOf'; readonly alternatives: readonly GlobNode[][] };

/** Limits on one pattern, checked when it compiles. */
export const GLOB_LIMITS = Object.freeze({
  /** Characters (code points) in a pattern. */
  maxLength: 1024,
  /** `*` and `**` in a pattern (`**` counts once). */
  maxStars: 64,
  /** Alternatives the `{...}` groups expand to (`{a,b}{c,d,e}` has 6). */
  maxAlternatives: 64,
  /** Characters and wildcards of all expanded alternatives together: what a match costs per character. */
  maxExpandedUnits: 4096,
});

/** Patterns quoted in messages are cut here: an error must stay readable when the pattern is 1 KiB. */
const QUOTED_PREFIX = 64;

export class GlobSyntaxError extends Error {
  override readonly name = 'GlobSyntaxError';
  constructor(
    readonly pattern: string,
    readonly detail: string,
  ) {
    const quoted = pattern.length > QUOTED_PREFIX ? `${pattern.slice(0, QUOTED_PREFIX)}…` : pattern;
    super(`invalid glob ${JSON.stringify(quoted)}: ${detail}`);
  }
}

const TEXT_BREAKERS = new Set(['?', '*', '[', '{']);
const TERMS_BREAKERS = new Set(['?', '*', '[', '{', '}', ',']);

/** Parses a pattern into a sequence of nodes; throws GlobSyntaxError when it does not compile. */
export function parseGlob(pattern: string): GlobNode[] {
  return new GlobParser(pattern).parse();
}

class GlobParser {
  private readonly chars: string[];
  private pos = 0;
  private stars = 0;

  constructor(private readonly pattern: string) {
    // Checked on UTF-16 length first so that a huge string is refused before it is split.
    if (pattern.length > 2 * GLOB_LIMITS.maxLength) this.tooLong();
    // Code points, not UTF-16 units: `?` and `[...]` match one character as a person counts them.
    this.chars = Array.from(pattern);
    if (this.chars.length > GLOB_LIMITS.maxLength) this.tooLong();
  }

  private tooLong(): never {
    this.fail(`longer than ${GLOB_LIMITS.maxLength} characters`);
  }

  private star(kind: 'any' | 'super'): GlobNode {
    if (++this.stars > GLOB_LIMITS.maxStars) this.fail(`more than ${GLOB_LIMITS.maxStars} "*"`);
    return { kind };
  }

  parse(): GlobNode[] {
    return this.sequence(0);
  }

  private fail(detail: string): never {
    throw new GlobSyntaxError(this.pattern, detail);
  }

  private peek(offset = 0): string | undefined {
    return this.chars[this.pos + offset];
  }

  /** Reads nodes until the end of input, or (inside a group) until `,` or `}`. */
  private sequence(depth: number): GlobNode[] {
    const nodes: GlobNode[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined) {
        if (depth > 0) this.fail('unclosed "{"');
        return nodes;
      }
      if (depth > 0 && (c === ',' || c === '}')) return nodes;
      if (c === '{') {
        this.pos++;
        nodes.push(this.group(depth + 1));
      } else if (c === '[') {
        this.pos++;
        nodes.push(this.bracket());
      } else if (c === '?') {
        this.pos++;
        nodes.push({ kind: 'single' });
      } else if (c === '*') {
        this.pos++;
        if (this.peek() === '*') {
          this.pos++;
          nodes.push(this.star('super'));
        } else {
          nodes.push(this.star('any'));
        }
      } else {
        const text = this.text(depth > 0 ? TERMS_BREAKERS : TEXT_BREAKERS);
        if (text.length > 0) nodes.push({ kind: 'text', text });
      }
    }
  }

  private group(depth: number): GlobNode {
    const alternatives: GlobNode[][] = [];
    for (;;) {
      // a pattern of n characters has fewer than n alternatives; their product is bounded in glob.ts
      alternatives.push(this.sequence(depth));
      const c = this.peek();
      this.pos++;
      if (c === '}') return { kind: 'anyOf', alternatives };
      // sequence() only returns inside a group at ',' or '}' (or fails at the end of input)
    }
  }

  /** Literal text with escapes resolved, up to the next breaker. */
  private text(breakers: ReadonlySet<string>): string {
    let out = '';
    for (;;) {
      const c = this.peek();
      if (c === undefined) return out;
      if (c === '\\') {
        const next = this.peek(1);
        if (next === undefined) this.fail('trailing "\\"');
        out += next;
        this.pos += 2;
        continue;
      }
      if (breakers.has(c)) return out;
      out += c;
      this.pos++;
    }
  }

  /** After `[`: `!`? then either `lo-hi` or a list of characters, then `]`. */
  private bracket(): GlobNode {
    let not = false;
    if (this.peek() === '!') {
      not = true;
      this.pos++;
    }
    const first = this.peek();
    if (first === undefined) this.fail('unclosed "["');
    if (this.peek(1) === '-') {
      // gobwas takes the character after '-' as the upper bound whatever it is (']' included)
      const hi = this.peek(2);
      if (hi === undefined) this.fail('unclosed "["');
      this.pos += 3;
      if (this.peek() !== ']')
        this.fail(this.peek() === undefined ? 'unclosed "["' : 'expected "]" after a range');
      this.pos++;
      const lo = first.codePointAt(0)!;
      const hiCode = hi.codePointAt(0)!;
      if (hiCode < lo) this.fail(`range "${first}-${hi}" is reversed`);
      return { kind: 'range', lo, hi: hiCode, not };
    }
    const list = this.text(new Set([']']));
    if (this.peek() !== ']') this.fail('unclosed "["');
    this.pos++;
    if (list.length === 0) this.fail('empty "[]"');
    return { kind: 'list', chars: Array.from(list, (ch) => ch.codePointAt(0)!), not };
  }
}
