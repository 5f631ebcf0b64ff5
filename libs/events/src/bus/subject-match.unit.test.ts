import { describe, expect, it } from 'vitest';
import { commonWildcard, subjectMatches } from './subject-filter.js';

describe('which subjects a consumer takes', () => {
  it('matches a type published below its source token by its wildcard subject', () => {
    expect(subjectMatches('ns.ext.*.sync.request', 'ns.ext.ci.sync.request')).toBe(true);
    expect(subjectMatches('ns.ext.*.sync.request', 'ns.ext.ci.git.push')).toBe(false);
    expect(subjectMatches('ns.ext.*.sync.request', 'ns.ext.sync.request')).toBe(false);
    expect(subjectMatches('ns.ext.*.sync.request', 'ns.ext.ci.sync.request.more')).toBe(false);
  });

  it('matches exact subjects exactly and > as the rest (at least one token)', () => {
    expect(subjectMatches('ns.evt.project.created', 'ns.evt.project.created')).toBe(true);
    expect(subjectMatches('ns.evt.project.created', 'ns.evt.project.deleted')).toBe(false);
    expect(subjectMatches('ns.evt.>', 'ns.evt.project.created')).toBe(true);
    expect(subjectMatches('ns.evt.>', 'ns.evt')).toBe(false);
    expect(commonWildcard(['ns.evt.project.created', 'ns.evt.project.deleted'])).toBe('ns.evt.project.>');
  });
});
