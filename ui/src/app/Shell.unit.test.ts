import { describe, expect, it } from 'vitest';
import { current } from './Shell';

describe('current section', () => {
  it('is the section of the path and of the paths below it, not of a longer name', () => {
    expect(current('/applications', '/applications')).toBe(true);
    expect(current('/applications/argocd/guestbook', '/applications')).toBe(true);
    expect(current('/applicationsets', '/applications')).toBe(false);
  });
});
