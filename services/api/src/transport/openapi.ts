// The OpenAPI 3.1 document of the HTTP/JSON API, derived from the same operation table (and the
// same zod input schemas) that serve the requests, so the document cannot drift from behaviour.
import { z } from 'zod';
import { allOperations } from './operations/index.js';
import { sessionModeParameter } from './session-cookie.js';

function pathParams(path: string): string[] {
  return [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
}

export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of allOperations) {
    if (!op.http) continue;
    const path = op.http.path.replace(/:(\w+)/g, '{$1}');
    const params = pathParams(op.http.path);
    const schema = z.toJSONSchema(op.input, { io: 'input', unrepresentable: 'any' }) as {
      properties?: Record<string, unknown>;
      required?: string[];
    };
    const props = schema.properties ?? {};
    const hasBody = op.http.method === 'POST' || op.http.method === 'PUT';
    const bodyField = op.http.body;
    const inQuery = (name: string) =>
      !params.includes(name) && (hasBody ? bodyField !== undefined && name !== bodyField : true);
    const parameters = [
      ...(op.name === 'SessionService.Create' ? [sessionModeParameter] : []),
      ...params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      ...Object.entries(props)
        .filter(([name]) => inQuery(name))
        .map(([name, s]) => ({ name, in: 'query', required: false, schema: s })),
    ];
    const bodyProps = Object.fromEntries(Object.entries(props).filter(([name]) => !params.includes(name)));
    paths[path] ??= {};
    paths[path][op.http.method.toLowerCase()] = {
      operationId: op.name,
      summary: op.summary,
      security: op.auth === 'public' ? [] : [{ bearer: [] }, { cookie: [] }],
      parameters,
      ...(hasBody
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: bodyField
                    ? (props[bodyField] ?? { type: 'object' })
                    : {
                        type: 'object',
                        additionalProperties: false,
                        properties: bodyProps,
                        required: (schema.required ?? []).filter((r) => !params.includes(r)),
                      },
                },
              },
            },
          }
        : {}),
      responses: {
        '200': {
          description: `the proto JSON mapping of the ${op.name} response (capstan.api.v1)`,
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        '400': { $ref: '#/components/responses/Error' },
        '401': { $ref: '#/components/responses/Error' },
        '403': { $ref: '#/components/responses/Error' },
        '404': { $ref: '#/components/responses/Error' },
        '413': { $ref: '#/components/responses/Error' },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Capstan API',
      version: 'v1',
      description: 'HTTP/JSON face of the capstan.api.v1 gRPC services',
    },
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT or service token' },
        // The web UI's session (a session JWT only); state-changing calls add the x-capstan-csrf header.
        cookie: { type: 'apiKey', in: 'cookie', name: 'capstan_session' },
      },
      responses: {
        Error: {
          description: 'an error; details name each invalid field by its path',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['code', 'message'],
                properties: {
                  code: { type: 'string' },
                  message: { type: 'string' },
                  details: {
                    type: 'array',
                    items: {
                      type: 'object',
                      properties: { field: { type: 'string' }, description: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
}
