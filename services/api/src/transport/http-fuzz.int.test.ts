// Property-based fuzzing of every HTTP operation of the api (the operation table, as the OpenAPI
// document describes it) against the real api, PostgreSQL and NATS: generated malformed and boundary
// inputs (path parameters, query parameters, JSON bodies that are not objects, known fields with
// values of every wrong type and size, unknown fields, text that is not JSON, deep nesting, no or a
// forged token) never get a 5xx, never crash the api, and every 400 names the field it refuses.
// CAPSTAN_FUZZ_RUNS sets how many inputs (1,000 here in `npm test`; the nightly run uses 100,000).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ADMIN_PASSWORD, startHarness, type Harness } from '../test-support/harness.js';
import { openApiDocument } from './openapi.js';

const RUNS = Number(process.env.CAPSTAN_FUZZ_RUNS ?? 1_000);

interface Route {
  method: string;
  path: string;
  operationId: string;
  pathParams: string[];
  queryParams: string[];
  bodyFields: string[];
  hasBody: boolean;
}

function routes(): Route[] {
  const doc = openApiDocument() as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, o]) => {
      const params = (o.parameters ?? []) as { name: string; in: string }[];
      const body = (
        o.requestBody as { content: Record<string, { schema: { properties?: object } }> } | undefined
      )?.content['application/json']?.schema;
      return {
        method: method.toUpperCase(),
        path,
        operationId: String(o.operationId),
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        bodyFields: Object.keys(body?.properties ?? {}),
        hasBody: body !== undefined,
      };
    }),
  );
}

/** Strings at the edges: empty, huge, control characters, lone surrogates, traversal, injection, numbers. */
const edgeString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '..',
    '../../etc/passwd',
    'a\u0000b',
    '\ud800',
    '*',
    '%',
    '%00',
    '{{.x}}',
    "'; drop table api.events; --",
    'x'.repeat(5_000),
    'y'.repeat(300_000),
    '-1',
    '1e309',
    'NaN',
    'true',
    'null',
    '[]',
    '{}',
    'https://u:p@example.com/r.git',
    'argocd/guestbook',
    'admin',
  ),
);
const edgeNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    0,
    -1,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53,
    -(2 ** 53),
    1e308,
    0.5,
    Number.MAX_SAFE_INTEGER + 2,
  ),
);
const { value: edgeValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    edgeString,
    edgeNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(edgeString, tie('value'), { maxKeys: 4 }),
  ),
}));
const deepNesting = fc.integer({ min: 50, max: 400 }).map((n) => '['.repeat(n) + ']'.repeat(n));

/** A path segment as sent; a lone surrogate has no UTF-8 form: its CESU bytes go (invalid UTF-8). */
function pathSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return text.replace(/[\ud800-\udfff]/g, '%ED%A0%80').replace(/[^%\w.-]/g, (c) => encodeURIComponent(c));
  }
}

interface FuzzInput {
  route: Route;
  auth: 'admin' | 'none' | 'forged';
  path: string[];
  query: [string, string | string[]][];
  body: { kind: 'json'; value: unknown } | { kind: 'text'; text: string } | { kind: 'none' };
}

function inputFor(rs: Route[]): fc.Arbitrary<FuzzInput> {
  return fc.constantFrom(...rs).chain((route) => {
    const known = [...new Set([...route.queryParams, ...route.bodyFields])];
    const field = known.length > 0 ? fc.oneof(fc.constantFrom(...known), edgeString) : edgeString;
    const fieldsObject = fc
      .array(fc.tuple(field, edgeValue), { maxLength: 6 })
      .map((kv) => Object.fromEntries(kv) as unknown);
    return fc.record({
      route: fc.constant(route),
      auth: fc.constantFrom('admin', 'admin', 'admin', 'admin', 'none', 'forged'),
      path: fc.tuple(...route.pathParams.map(() => edgeString)).map((t) => [...t] as string[]),
      query: fc.array(
        fc.tuple(
          field,
          fc.oneof(edgeString, fc.array(edgeString, { maxLength: 3 })) as fc.Arbitrary<string | string[]>,
        ),
        { maxLength: 4 },
      ),
      body: route.hasBody
        ? fc.oneof(
            fieldsObject.map((value) => ({ kind: 'json' as const, value })),
            edgeValue.map((value) => ({ kind: 'json' as const, value })),
            fc
              .oneof(fc.string({ maxLength: 60 }), deepNesting)
              .map((text) => ({ kind: 'text' as const, text })),
          )
        : fc.constant({ kind: 'none' as const }),
    });
  });
}

describe('api HTTP fuzzing', () => {
  let h: Harness;
  let admin: string;
  const seen = new Map<number, number>();

  beforeAll(async () => {
    h = await startHarness();
    admin = await h.login('admin', ADMIN_PASSWORD);
  });
  afterAll(async () => h?.stop());

  const send = async (input: FuzzInput) => {
    const { route } = input;
    let path = route.path;
    route.pathParams.forEach((p, i) => (path = path.replace(`{${p}}`, pathSegment(input.path[i]!))));
    const qs = new URLSearchParams();
    for (const [k, v] of input.query) for (const one of Array.isArray(v) ? v : [v]) qs.append(k, one);
    const headers: Record<string, string> = {};
    if (input.auth === 'admin') headers.authorization = `Bearer ${admin}`;
    if (input.auth === 'forged') headers.authorization = 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.';
    let body: string | undefined;
    if (input.body.kind !== 'none') {
      headers['content-type'] = 'application/json';
      body = input.body.kind === 'json' ? JSON.stringify(input.body.value) : input.body.text;
    }
    const res = await fetch(`${h.httpUrl}${path}${qs.size > 0 ? `?${qs}` : ''}`, {
      method: route.method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    return { status: res.status, text };
  };

  it('given a path that is not percent-encoded UTF-8 (found by the fuzzer), then 400 in the one error shape, naming the path', async () => {
    const res = await fetch(`${h.httpUrl}/api/v1/account/%ED%A0%80/token`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect([res.status, await res.json()]).toEqual([
      400,
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        details: [expect.objectContaining({ field: 'path' })],
      }),
    ]);
  });

  it(`never answers 5xx to ${RUNS} generated malformed and boundary inputs, and every 400 names its field`, async () => {
    const rs = routes();
    expect(rs.length).toBeGreaterThan(40);
    await fc.assert(
      fc.asyncProperty(inputFor(rs), async (input) => {
        let r = await send(input);
        // An operation may end the admin's session (logout, password change): log in again.
        if (r.status === 401 && input.auth === 'admin') {
          admin = await h.login('admin', ADMIN_PASSWORD);
          r = await send(input);
        }
        seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
        const where = `${input.route.method} ${input.route.path} -> ${r.status} ${r.text.slice(0, 300)}`;
        // Operations the api forwards to a peer the harness does not run (repo, appset, sync) answer
        // 503 "not configured" once the input passed validation: not a failure of the api.
        const peerAbsent = r.status === 503 && /is not configured/.test(r.text);
        if (!peerAbsent) expect(r.status, where).toBeLessThan(500);
        if (r.status === 400) {
          const err = JSON.parse(r.text) as { message: string; details?: { field: string }[] };
          // A field of the input, or the request body itself when it is not a JSON object.
          const named =
            (err.details ?? []).some((d) => d.field.length > 0) || /^invalid request body/.test(err.message);
          expect(named, where).toBe(true);
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    // Still serving, and the figures of what was tried.
    const health = await fetch(`${h.httpUrl}/api/v1/projects`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(health.status).toBe(200);
    console.log(`http fuzz: ${RUNS} inputs, statuses ${JSON.stringify(Object.fromEntries(seen))}`);
  }, 600_000);
});
