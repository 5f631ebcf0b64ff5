// The api's one error shape ({ code, message, details[{ field, description }] }) as a thrown error,
// so pages can tell a denial (403) from a missing session (401) from invalid input (400).
export interface ErrorBody {
  code?: string;
  message?: string;
  details?: { field?: string; description?: string }[];
}

export class ApiError extends Error {
  readonly code: string;
  readonly details: { field?: string; description?: string }[];
  constructor(
    readonly status: number,
    body: ErrorBody | undefined,
  ) {
    super(body?.message ?? `request failed (${status})`);
    this.code = body?.code ?? 'UNKNOWN';
    this.details = body?.details ?? [];
  }
}

export const isDenied = (e: unknown): e is ApiError => e instanceof ApiError && e.status === 403;
export const isUnauthenticated = (e: unknown): e is ApiError => e instanceof ApiError && e.status === 401;
