// Glob-in-glob containment, for the self-service bound check: may a child project list pattern C
// under a parent that lists pattern P? Deciding "every text C matches, P matches" exactly is hard
// in general, so the answer is conservative: true only when it is certain, false otherwise (the
// child can then write a narrower pattern, or restate the parent's).
//
// The rule, applied to each `{...}` alternative of C against some alternative of P:
//   - equal patterns are within each other;
//   - P is written with literal text and `*`/`**` only (no `?`, `[...]`); each wildcard of C (`*`,
//     `?`, `[...]`, and `**` where there are no separators) is replaced by a character that no
//     literal of P can match, so only a star of P can absorb it; C is within P when P matches that
//     text. With separators (sourceRepos, resource kinds), a `**` of C, or a `[...]` of C that can
//     match a separator, is within P only when the alternatives are equal.
// Sound because a star of P that absorbs a placeholder absorbs whatever the wildcard stands for
// (with separators: a wildcard of C never produces a separator, and neither may the star).
import { compileGlob, expand, type GlobOptions } from './glob.js';
import { parseGlob, type GlobNode } from './parse.js';

const PLACEHOLDER = '\u0000';

/** True when every text `child` matches is certainly matched by `parent`; throws GlobSyntaxError on a bad pattern. */
export function globWithin(child: string, parent: string, options: GlobOptions = {}): boolean {
  if (child === parent) return true;
  if (parent.includes(PLACEHOLDER)) return false;
  const separators = options.separators ?? '';
  const childAlts = expand(parseGlob(child), child);
  const parentAlts = expand(parseGlob(parent), parent);
  return childAlts.every((c) => parentAlts.some((p) => alternativeWithin(c, p, separators, options)));
}

function alternativeWithin(
  child: readonly GlobNode[],
  parent: readonly GlobNode[],
  separators: string,
  options: GlobOptions,
): boolean {
  if (sameNodes(child, parent)) return true;
  if (parent.some((n) => n.kind !== 'text' && n.kind !== 'any' && n.kind !== 'super')) return false;
  let text = '';
  for (const node of child) {
    const part = placeholderText(node, separators);
    if (part === undefined) return false;
    text += part;
  }
  return compileGlob(unparse(parent), options).match(text);
}

/** The text standing for one node of the child, or undefined when it cannot be certain. */
function placeholderText(node: GlobNode, separators: string): string | undefined {
  switch (node.kind) {
    case 'text':
      return node.text;
    case 'any':
    case 'single':
      return PLACEHOLDER;
    case 'super':
      return separators === '' ? PLACEHOLDER : undefined;
    case 'list':
      if (separators === '') return PLACEHOLDER;
      if (node.not || node.chars.some((c) => separators.includes(String.fromCodePoint(c)))) return undefined;
      return PLACEHOLDER;
    case 'range': {
      if (separators === '') return PLACEHOLDER;
      const hitsSeparator = Array.from(separators).some((s) => {
        const c = s.codePointAt(0)!;
        return c >= node.lo && c <= node.hi;
      });
      return node.not || hitsSeparator ? undefined : PLACEHOLDER;
    }
    case 'anyOf':
      return undefined; // expanded before
  }
}

/** A parent alternative (text, `*`, `**` only) written back as a pattern. */
function unparse(nodes: readonly GlobNode[]): string {
  return nodes
    .map((n) =>
      n.kind === 'text' ? n.text.replace(/[\\*?[\]{},]/g, (c) => `\\${c}`) : n.kind === 'super' ? '**' : '*',
    )
    .join('');
}

function sameNodes(a: readonly GlobNode[], b: readonly GlobNode[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The one text a pattern matches when it has no wildcards (escapes resolved), else undefined. */
export function globLiteral(pattern: string): string | undefined {
  const nodes = parseGlob(pattern);
  if (nodes.length === 0) return '';
  if (nodes.every((n) => n.kind === 'text')) return nodes.map((n) => (n as { text: string }).text).join('');
  return undefined;
}
