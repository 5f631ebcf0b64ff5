import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors';
import { lines, placeViolations } from './violations';

const invalid = (...details: [string, string][]) =>
  new ApiError(400, {
    code: 'INVALID_ARGUMENT',
    message: 'invalid',
    details: details.map(([field, description]) => ({ field, description })),
  });

describe('placing the api violations by field', () => {
  it('puts each violation under the longest form field its path starts with, in words', () => {
    const placed = placeViolations(
      invalid(
        ['metadata.name', 'must be a lowercase RFC 1123 subdomain'],
        ['spec.destinations[1].namespace', 'invalid glob'],
        ['spec.sourceRepos[0]', 'invalid glob'],
        ['spec.roles[0].name', 'required'],
      ),
      ['metadata.name', 'spec.destinations', 'spec.sourceRepos', 'spec'],
    );
    expect(placed.byField).toEqual({
      'metadata.name': ['must be a lowercase RFC 1123 subdomain'],
      'spec.destinations': ['line 2, namespace: invalid glob'],
      'spec.sourceRepos': ['line 1: invalid glob'],
      spec: ['roles[0].name: required'],
    });
    expect(placed.rest).toEqual([]);
  });

  it('keeps what belongs to no field, strips the request prefix, and shows an error without details', () => {
    const placed = placeViolations(
      invalid(['project.metadata.name', 'required'], ['upsert', 'expected a boolean']),
      ['metadata.name'],
      'project.',
    );
    expect(placed).toEqual({
      byField: { 'metadata.name': ['required'] },
      rest: ['upsert: expected a boolean'],
    });
    expect(placeViolations(new ApiError(403, { message: 'permission denied' }), ['x']).rest).toEqual([
      'permission denied',
    ]);
    expect(placeViolations(null, ['x'])).toEqual({ byField: {}, rest: [] });
    expect(placeViolations(invalid(['spec.sourceReposX', 'bad']), ['spec.sourceRepos']).rest).toEqual([
      'spec.sourceReposX: bad',
    ]);
  });

  it('reads a textarea as trimmed lines without blanks', () => {
    expect(lines(' a \n\n b\n')).toEqual(['a', 'b']);
  });
});
