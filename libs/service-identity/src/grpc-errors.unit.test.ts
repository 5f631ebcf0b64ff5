// A peer's refusal keeps its code, message and field paths; anything else is "unavailable".
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { CapstanError, UnavailableError, ValidationError } from '@capstan/service';
import { fieldViolationsMetadata } from '@capstan/proto';
import { fromPeer, peerError, toServiceError } from './grpc-errors.js';

const grpcError = (code: number, details: string, metadata = new Metadata()): ServiceError =>
  Object.assign(new Error(details), { code, details, metadata });

describe('peer errors', () => {
  it('keeps a refusal code and its message', () => {
    const err = peerError(grpcError(status.NOT_FOUND, 'application argocd/x not found'), 'appset');
    expect(err).toBeInstanceOf(CapstanError);
    expect([err.code, err.message]).toEqual(['NOT_FOUND', 'application argocd/x not found']);
  });

  it('takes a peer refusing our own identity as a denial', () => {
    expect(peerError(grpcError(status.UNAUTHENTICATED, 'bad token'), 'api').code).toBe('PERMISSION_DENIED');
  });

  it('keeps field violations with their paths', () => {
    const md = fieldViolationsMetadata([{ field: 'spec.generators[0]', description: 'unknown key' }]);
    const err = peerError(grpcError(status.INVALID_ARGUMENT, 'invalid', md), 'appset');
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).violations).toEqual([
      { field: 'spec.generators[0]', description: 'unknown key' },
    ]);
  });

  it('says the peer is unavailable for anything else, without its details', async () => {
    const err = peerError(grpcError(status.INTERNAL, 'stack trace at /secret/path'), 'repo');
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err.message).toBe('the repo service is unavailable');
    await expect(fromPeer('repo', () => Promise.reject(new Error('ECONNREFUSED')))).rejects.toThrow(
      'the repo service is unavailable',
    );
  });
});

describe('errors leaving a gRPC server', () => {
  const logged: unknown[] = [];
  const logger = { error: (o: unknown) => logged.push(o) } as unknown as Parameters<typeof toServiceError>[1];

  it('keeps a domain error and its field paths, and a peer reads them back as they were', () => {
    const out = toServiceError(new ValidationError([{ field: 'spec.x', description: 'bad' }]), logger);
    expect(out.code).toBe(status.INVALID_ARGUMENT);
    const back = peerError({ ...out, message: out.details } as ServiceError, 'appset');
    expect((back as ValidationError).violations).toEqual([{ field: 'spec.x', description: 'bad' }]);
  });

  it('never describes an unexpected error to the caller, and logs it', () => {
    const out = toServiceError(new Error('password=hunter2 at db.ts:12'), logger, 'upsert');
    expect([out.code, out.details]).toEqual([status.INTERNAL, 'internal error']);
    expect(logged).toHaveLength(1);
  });
});
