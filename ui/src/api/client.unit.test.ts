import { describe, expect, it } from 'vitest';
import { readCookie, unwrap } from './client';
import { ApiError, isDenied, isUnauthenticated } from './errors';

describe('client helpers', () => {
  it('reads one cookie by name', () => {
    expect(readCookie('capstan_csrf', 'a=1; capstan_csrf=abc%3D; b=2')).toBe('abc=');
    expect(readCookie('capstan_session', 'a=1')).toBeUndefined();
  });

  it("turns a failed response into an ApiError with the api's code, message and field details", () => {
    const body = {
      code: 'INVALID_ARGUMENT',
      message: 'bad',
      details: [{ field: 'spec.project', description: 'required' }],
    };
    let caught: unknown;
    try {
      unwrap({ error: body, response: new Response(null, { status: 400 }) });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect(caught).toMatchObject({
      status: 400,
      code: 'INVALID_ARGUMENT',
      message: 'bad',
      details: body.details,
    });
    expect(isDenied(new ApiError(403, undefined))).toBe(true);
    expect(isUnauthenticated(new ApiError(401, undefined))).toBe(true);
    expect(unwrap({ data: { ok: 1 }, response: new Response(null, { status: 200 }) })).toEqual({ ok: 1 });
  });
});
