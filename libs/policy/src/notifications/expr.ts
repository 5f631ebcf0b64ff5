// The subset of expr (github.com/expr-lang/expr, which Argo CD Notifications evaluates trigger
// conditions with) that the built-in triggers use: `and`/`&&`, `or`/`||`, `not`/`!`, `==`, `!=`,
// `in [..]`, parentheses, `nil`, `true`, `false`, numbers, quoted strings, and member paths on the
// environment (`app.status.operationState.phase`, `?.` as `.`). A missing member is nil, as expr's
// optional chaining gives it. Anything else (function calls such as time.Parse, arithmetic) is
// refused when the condition is read, naming the position, rather than guessed at. Linear in the
// expression's length; conditions are bounded to 4 KiB.

export class ExprError extends Error {}

type Value = unknown;
type Node =
  | { kind: 'lit'; value: Value }
  | { kind: 'path'; parts: string[] }
  | { kind: 'not'; arg: Node }
  | { kind: 'bin'; op: 'and' | 'or' | '==' | '!=' | 'in'; left: Node; right: Node }
  | { kind: 'list'; items: Node[] };

const MAX_LENGTH = 4096;
const TOKEN =
  /\s*(?:(\d+(?:\.\d+)?)|'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(&&|\|\||==|!=|\?\.|[()[\],.!])|([A-Za-z_][A-Za-z0-9_]*))/y;

interface Token {
  t: 'num' | 'str' | 'op' | 'id';
  v: string;
  at: number;
}

function tokenize(src: string): Token[] {
  if (src.length > MAX_LENGTH) throw new ExprError(`condition longer than ${MAX_LENGTH} characters`);
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < src.length) {
    if (/^\s*$/.test(src.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(src);
    if (!m) {
      const rest = src.slice(at);
      const pos = at + rest.length - rest.trimStart().length;
      throw new ExprError(
        `unsupported syntax at position ${pos}: ${JSON.stringify(src.slice(pos, pos + 12))}`,
      );
    }
    // The token's own position, after the spaces before it.
    const start = at + m[0].length - m[0].trimStart().length;
    if (m[1] !== undefined) out.push({ t: 'num', v: m[1], at: start });
    else if (m[2] !== undefined || m[3] !== undefined)
      out.push({ t: 'str', v: (m[2] ?? m[3]!).replace(/\\(.)/g, '$1'), at: start });
    else if (m[4] !== undefined) out.push({ t: 'op', v: m[4] === '?.' ? '.' : m[4], at: start });
    else out.push({ t: 'id', v: m[5]!, at: start });
  }
  return out;
}

class Parser {
  private i = 0;
  constructor(private readonly toks: Token[]) {}

  parse(): Node {
    const n = this.or();
    if (this.i < this.toks.length) this.fail('unexpected');
    return n;
  }

  private peek(): Token | undefined {
    return this.toks[this.i];
  }
  private is(v: string): boolean {
    const t = this.peek();
    return t !== undefined && (t.t === 'op' || t.t === 'id') && t.v === v;
  }
  private fail(what: string): never {
    const t = this.peek();
    throw new ExprError(
      t ? `${what} ${JSON.stringify(t.v)} at position ${t.at}` : `${what} end of condition`,
    );
  }
  private expect(v: string): void {
    if (!this.is(v)) this.fail(`expected ${JSON.stringify(v)}, found`);
    this.i++;
  }

  private or(): Node {
    let left = this.and();
    while (this.is('or') || this.is('||')) {
      this.i++;
      left = { kind: 'bin', op: 'or', left, right: this.and() };
    }
    return left;
  }
  private and(): Node {
    let left = this.unary();
    while (this.is('and') || this.is('&&')) {
      this.i++;
      left = { kind: 'bin', op: 'and', left, right: this.unary() };
    }
    return left;
  }
  private unary(): Node {
    if (this.is('!') || this.is('not')) {
      this.i++;
      return { kind: 'not', arg: this.unary() };
    }
    return this.comparison();
  }
  private comparison(): Node {
    const left = this.primary();
    for (const op of ['==', '!=', 'in'] as const)
      if (this.is(op)) {
        this.i++;
        return { kind: 'bin', op, left, right: this.primary() };
      }
    return left;
  }
  private primary(): Node {
    const t = this.peek();
    if (!t) this.fail('expected a value at');
    if (t.t === 'num') return (this.i++, { kind: 'lit', value: Number(t.v) });
    if (t.t === 'str') return (this.i++, { kind: 'lit', value: t.v });
    if (this.is('(')) {
      this.i++;
      const n = this.or();
      this.expect(')');
      return n;
    }
    if (this.is('[')) return this.list();
    if (t.t === 'id') return this.path();
    return this.fail('unexpected');
  }
  private list(): Node {
    this.expect('[');
    const items: Node[] = [];
    while (!this.is(']')) {
      items.push(this.primary());
      if (!this.is(']')) this.expect(',');
    }
    this.i++;
    return { kind: 'list', items };
  }
  private path(): Node {
    const first = this.peek()!.v;
    this.i++;
    if (first === 'nil') return { kind: 'lit', value: null };
    if (first === 'true' || first === 'false') return { kind: 'lit', value: first === 'true' };
    const parts = [first];
    while (this.is('.')) {
      this.i++;
      const t = this.peek();
      if (!t || t.t !== 'id') this.fail('expected a member name, found');
      parts.push(t.v);
      this.i++;
    }
    if (this.is('(')) this.fail('function calls are not supported:');
    return { kind: 'path', parts };
  }
}

/** A condition read once, evaluated many times. */
export interface Condition {
  readonly source: string;
  evaluate(env: Readonly<Record<string, unknown>>): boolean;
}

const isNil = (v: unknown) => v === null || v === undefined;

function evalNode(n: Node, env: Readonly<Record<string, unknown>>): Value {
  switch (n.kind) {
    case 'lit':
      return n.value;
    case 'path': {
      let v: unknown = env;
      for (const p of n.parts) {
        if (isNil(v) || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, p)) return null;
        v = (v as Record<string, unknown>)[p];
      }
      return v ?? null;
    }
    case 'list':
      return n.items.map((i) => evalNode(i, env));
    case 'not':
      return !truthy(evalNode(n.arg, env));
    case 'bin': {
      if (n.op === 'and') return truthy(evalNode(n.left, env)) && truthy(evalNode(n.right, env));
      if (n.op === 'or') return truthy(evalNode(n.left, env)) || truthy(evalNode(n.right, env));
      const l = evalNode(n.left, env);
      const r = evalNode(n.right, env);
      if (n.op === 'in') return Array.isArray(r) && r.some((x) => equal(l, x));
      return n.op === '==' ? equal(l, r) : !equal(l, r);
    }
  }
}

const equal = (a: unknown, b: unknown) => (isNil(a) && isNil(b)) || a === b;
const truthy = (v: unknown) => v === true;

/** Reads a condition; an ExprError names what is not supported and where. */
export function compileCondition(source: string): Condition {
  const ast = new Parser(tokenize(source)).parse();
  return { source, evaluate: (env) => truthy(evalNode(ast, env)) };
}
