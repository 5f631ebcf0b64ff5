// One table of operations drives both transports: each names its gRPC method and HTTP route, the
// zod schema of its input (the proto JSON mapping of the request; HTTP merges path, query and body
// into it), whether it needs a caller, and what it does. Validation, authentication, error mapping
// and auditing therefore happen once, the same way, for gRPC and HTTP.
import { z } from 'zod';
import type { RequestContext } from '../support/request.js';
import type { ApiServices } from '../services.js';

export interface MessageCodec {
  fromJSON(object: unknown): unknown;
  toJSON(message: never): unknown;
}

export interface Operation<I = unknown> {
  /** `<proto service>.<Method>`, e.g. ProjectService.Create. */
  name: string;
  /** Method key of the generated service definition (lower camel case). */
  grpcMethod: string;
  http:
    | {
        method: 'GET' | 'POST' | 'PUT' | 'DELETE';
        path: string;
        /** The input field the whole HTTP body is (Argo CD's `body: "applicationset"`); else the body's fields merge into the input. */
        body?: string;
      }
    | undefined;
  /** public: no token (login); user: any authenticated caller (RBAC inside). */
  auth: 'public' | 'user';
  summary: string;
  input: z.ZodType<I>;
  /**
   * Input fields whose strings may exceed api.input.max-string-length (a whole YAML text): bounded
   * by the request size instead. Their text is still checked (no NUL, no lone surrogate).
   */
  largeStrings?: ReadonlySet<string>;
  request: MessageCodec;
  response: MessageCodec;
  run(services: ApiServices, ctx: RequestContext, input: I): Promise<unknown>;
}

export function op<S extends z.ZodType>(o: Omit<Operation<z.output<S>>, 'input'> & { input: S }): Operation {
  return o as unknown as Operation;
}

/** Booleans and numbers arrive as strings in HTTP query strings. */
export const bool = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'true' || v === '1')
  .default(false);

export const int = z
  .union([z.number(), z.string().regex(/^-?\d+$/, 'expected an integer')])
  .transform((v) => Number(v))
  .pipe(z.number().int())
  .default(0);

/** A boolean the caller may leave out (undefined), in the same spellings as `bool`. */
export const optionalBool = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'true' || v === '1')
  .optional();

export const str = z.string().default('');

/** A repeated query parameter is an array; a single one a string. */
export const strList = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',').filter(Boolean)))
  .default([]);

/** An embedded resource (project, application): validated by its own domain schema, with field paths. */
export const resource = z.record(z.string(), z.unknown());

export const empty = z.strictObject({});
