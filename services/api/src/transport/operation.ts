// One table of operations drives both transports: each implements a method of a generated gRPC
// server interface (keyed by its method name, with its message types) and names its HTTP route, the
// zod schema of its input (the proto JSON mapping of the request; HTTP merges path, query and body
// into it), whether it needs a caller, and what it does. Validation, authentication, error mapping
// and auditing therefore happen once, the same way, for gRPC and HTTP.
import type { handleUnaryCall, MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { z } from 'zod';
import type { RequestContext } from '../support/request.js';
import type { ApiServices } from '../services.js';

/** The proto JSON codec of one message type: ts-proto's generated `fromJSON` / `toJSON`. */
export interface MessageCodec<T = unknown> {
  fromJSON(object: unknown): T;
  toJSON(message: T): unknown;
}

/** What one operation is, before the table it sits in gives it its gRPC method and name. */
export interface OperationSpec<I = unknown, Req = unknown, Res = unknown> {
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
  /** The generated message type of the method's request and response (checked against the server type). */
  request: MessageCodec<Req>;
  response: MessageCodec<Res>;
  run(services: ApiServices, ctx: RequestContext, input: I): Promise<unknown>;
}

export interface Operation extends OperationSpec {
  /** `<proto service>.<Method>`, e.g. ProjectService.Create: from the generated method's path. */
  name: string;
  /** Method key of the generated service definition (lower camel case). */
  grpcMethod: string;
}

export function op<S extends z.ZodType, Req, Res>(
  o: Omit<OperationSpec<z.output<S>, Req, Res>, 'input'> & { input: S },
): OperationSpec<unknown, Req, Res> {
  return o as unknown as OperationSpec<unknown, Req, Res>;
}

/** The method names of a generated server interface (ts-proto adds a string index signature to it). */
type Methods<S> = keyof { [K in keyof S as string extends K ? never : K]: S[K] } & string;
type RequestOf<H> = H extends handleUnaryCall<infer Req, infer _Res> ? Req : never;
type ResponseOf<H> = H extends handleUnaryCall<infer _Req, infer Res> ? Res : never;

/**
 * The generated server interface `S` (e.g. `apiv1.ProjectServiceServer`) implemented as operations:
 * one per method, with that method's request and response message types. A missing method, an extra
 * one or another message type does not compile.
 */
export type Implementation<S> = {
  [K in Methods<S>]: OperationSpec<unknown, RequestOf<S[K]>, ResponseOf<S[K]>>;
};

export interface ServiceOperations {
  definition: ServiceDefinition;
  operations: Operation[];
}

/** `/capstan.api.v1.ProjectService/Create` -> `ProjectService.Create`. */
export function operationName(path: string): string {
  const [, service = '', method = ''] = path.split('/');
  return `${service.split('.').at(-1)}.${method}`;
}

/** One proto service of the api: its generated definition and the operations implementing it. */
export function implement<S>(
  definition: { [K in Methods<S>]: MethodDefinition<RequestOf<S[K]>, ResponseOf<S[K]>> },
  implementation: Implementation<S>,
): ServiceOperations {
  const methods = definition as Record<string, MethodDefinition<unknown, unknown>>;
  const specs = implementation as Record<string, OperationSpec>;
  return {
    definition: methods as ServiceDefinition,
    operations: Object.entries(specs).map(([grpcMethod, spec]) => ({
      ...spec,
      grpcMethod,
      name: operationName(methods[grpcMethod]!.path),
    })),
  };
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
