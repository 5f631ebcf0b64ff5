// Bounds on tenant input, checked the same way wherever it enters (the api's HTTP and gRPC requests,
// every YAML document of an apply or a rendered repository): how deep values nest, how long strings,
// lists and objects are, and that every string is text PostgreSQL can store (no NUL, no lone UTF-16
// surrogate). Iterative (an explicit stack), so a deeply nested value cannot overflow the call stack.
import { formatPath, type PolicyIssue } from '../issues.js';

export interface InputLimits {
  /** Deepest nesting of objects and lists (the top-level value is depth 1). */
  readonly maxDepth: number;
  /** Longest string (in UTF-16 code units, JavaScript's length), also for object keys. */
  readonly maxStringLength: number;
  /** Most entries of one list or one object. */
  readonly maxEntries: number;
}

export const DEFAULT_INPUT_LIMITS: InputLimits = {
  maxDepth: 64,
  maxStringLength: 128 * 1024,
  maxEntries: 10_000,
};

/** At most this many issues are reported, so a huge bad input gives a bounded answer. */
const MAX_ISSUES = 20;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be accepted as text, or undefined. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain NUL (U+0000)';
  if (LONE_SURROGATE.test(s)) return 'must be valid Unicode (it contains a lone UTF-16 surrogate)';
  return undefined;
}

/**
 * Every way `value` exceeds `limits` or holds a string that is not storable text, by field path.
 * `exempt` names field paths whose string length is bounded elsewhere (e.g. a whole YAML text,
 * bounded by the request size); their text is still checked.
 */
export function inputLimitIssues(
  value: unknown,
  limits: InputLimits = DEFAULT_INPUT_LIMITS,
  exempt: ReadonlySet<string> = new Set(),
): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  const stack: { value: unknown; path: PropertyKey[] }[] = [{ value, path: [] }];
  const checkString = (s: string, path: PropertyKey[], what: string) => {
    const problem = textProblem(s);
    const where = formatPath(path);
    if (problem) issues.push({ path: where, message: `${what} ${problem}` });
    else if (s.length > limits.maxStringLength && !exempt.has(where))
      issues.push({ path: where, message: `${what} is longer than ${limits.maxStringLength} characters` });
  };
  while (stack.length > 0 && issues.length < MAX_ISSUES) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      checkString(v, path, 'value');
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (path.length + 1 > limits.maxDepth) {
      issues.push({ path: formatPath(path), message: `nested deeper than ${limits.maxDepth} levels` });
      continue;
    }
    if (Array.isArray(v)) {
      if (v.length > limits.maxEntries) {
        issues.push({ path: formatPath(path), message: `has more than ${limits.maxEntries} entries` });
        continue;
      }
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...path, i] });
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > limits.maxEntries) {
      issues.push({ path: formatPath(path), message: `has more than ${limits.maxEntries} fields` });
      continue;
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const problem = textProblem(key);
      if (problem || key.length > limits.maxStringLength) {
        // The key itself cannot be printed safely: name it by position.
        issues.push({
          path: formatPath(path) || '(root)',
          message: `field name #${i + 1} ${problem ?? `is longer than ${limits.maxStringLength} characters`}`,
        });
        continue;
      }
      stack.push({ value: (v as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return issues;
}
