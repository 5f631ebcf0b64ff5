import { describe, expect, it } from 'vitest';
import { findForMutation, resolveForApi, selectForProject, type Candidate } from './credential-selection.js';

const URL_A = 'https://git.example.com/shared/apps.git';
const c = (id: string, project: string, url = URL_A): Candidate => ({ id, url, project });

describe('selectForProject (lookup for an Application)', () => {
  const creds = [
    c('other', 'team-b'),
    c('global', ''),
    c('mine', 'team-a'),
    c('mine-2', 'team-a'),
    c('global-2', ''),
  ];

  it('chooses the first credential scoped to the project', () => {
    const d = selectForProject(creds, URL_A, 'team-a');
    expect(d.chosen?.id).toBe('mine');
    expect(d.reason).toBe('project-match');
    expect(d.considered.map((x) => x.id)).toEqual(['other', 'global', 'mine', 'mine-2', 'global-2']);
  });

  it("falls back to the first unscoped credential, never another project's", () => {
    const d = selectForProject(creds, URL_A, 'team-c');
    expect(d).toMatchObject({ chosen: { id: 'global' }, reason: 'unscoped-fallback' });
  });

  it('is anonymous when only other projects have credentials', () => {
    const d = selectForProject([c('other', 'team-b')], URL_A, 'team-a');
    expect(d).toMatchObject({ chosen: null, reason: 'none' });
    expect(d.considered).toHaveLength(1);
  });

  it('matches URLs the way Argo CD does (case, .git suffix), and only the same repository', () => {
    const d = selectForProject([c('x', 'team-a', 'HTTPS://Git.Example.com/shared/apps')], URL_A, 'team-a');
    expect(d.chosen?.id).toBe('x');
    expect(
      selectForProject([c('x', 'team-a', 'https://git.example.com/shared/apps-2.git')], URL_A, 'team-a')
        .chosen,
    ).toBeNull();
  });

  it('treats an empty project as "no scoped credential applies"', () => {
    expect(selectForProject(creds, URL_A, '').chosen?.id).toBe('global');
  });
});

describe('resolveForApi (get and delete)', () => {
  it('returns the only credential for the URL when no project is given, whatever its scope', () => {
    expect(resolveForApi([c('only', 'team-a')], URL_A, '')).toMatchObject({
      outcome: 'found',
      credential: { id: 'only' },
    });
  });

  it('returns it with a project only if the project matches', () => {
    expect(resolveForApi([c('only', 'team-a')], URL_A, 'team-a')).toMatchObject({ outcome: 'found' });
    expect(resolveForApi([c('only', 'team-a')], URL_A, 'team-b')).toMatchObject({ outcome: 'not-found' });
    expect(resolveForApi([c('only', '')], URL_A, 'team-b')).toMatchObject({ outcome: 'not-found' });
  });

  it('is ambiguous with several credentials and no project, and picks by project otherwise', () => {
    const creds = [c('a', 'team-a'), c('b', 'team-b')];
    expect(resolveForApi(creds, URL_A, '')).toMatchObject({ outcome: 'ambiguous' });
    expect(resolveForApi(creds, URL_A, 'team-b')).toMatchObject({
      outcome: 'found',
      credential: { id: 'b' },
    });
  });

  it('is not found when nothing matches the URL', () => {
    expect(resolveForApi([c('a', 'team-a')], 'https://elsewhere/x.git', '')).toMatchObject({
      outcome: 'not-found',
      considered: [],
    });
  });
});

describe('findForMutation', () => {
  it('matches URL and scope strictly', () => {
    const creds = [c('global', ''), c('a', 'team-a')];
    expect(findForMutation(creds, URL_A, 'team-a')?.id).toBe('a');
    expect(findForMutation(creds, URL_A, '')?.id).toBe('global');
    expect(findForMutation(creds, URL_A, 'team-b')).toBeNull();
  });
});
