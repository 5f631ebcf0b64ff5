// Component tests answer the UI's requests here: the client (openapi-fetch) takes globalThis.fetch
// when it is created, so setup.ts installs a fetch that asks the handler a test sets. The answers
// are the api's documented shapes (its error body with field details); the real api answers them in
// the e2e story (test/e2e/ui-story.test.ts).
export type Call = { method: string; path: string; search: string; body: unknown };
export type Handler = (call: Call) => { status?: number; body?: unknown } | undefined;

let handler: Handler = () => undefined;
export const calls: Call[] = [];

export function answer(h: Handler) {
  handler = h;
  calls.length = 0;
}

export async function fakeFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const request = input instanceof Request ? input : new Request(input, init);
  const url = new URL(request.url);
  const text = await request.text();
  const call = {
    method: request.method,
    path: url.pathname,
    search: url.search,
    body: text ? JSON.parse(text) : undefined,
  };
  calls.push(call);
  const r = handler(call) ?? {
    status: 404,
    body: { code: 'NOT_FOUND', message: `no answer for ${call.method} ${call.path}` },
  };
  return new Response(r.body === undefined ? null : JSON.stringify(r.body), {
    status: r.status ?? 200,
    headers: { 'content-type': 'application/json' },
  });
}

/** The api's answer to an invalid request: 400 with one detail per field. */
export const invalidAnswer = (...details: [field: string, description: string][]) => ({
  status: 400,
  body: {
    code: 'INVALID_ARGUMENT',
    message: details.map(([f, d]) => `${f}: ${d}`).join('; '),
    details: details.map(([field, description]) => ({ field, description })),
  },
});
