// Reading the ApplicationSets of -f files: every document in order, through the shared bounded YAML
// reader, with errors that name the file and the document, and nothing returned when any is bad.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CliError } from '../errors.js';
import { applicationSetProblem, parseQualifiedName, readApplicationSets } from './appset-manifests.js';

const dir = mkdtempSync(path.join(tmpdir(), 'capstan-appset-f-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const set = (name: string, extra = '') =>
  `apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: ${name}\n${extra}spec:\n  generators: [{list: {elements: [{cluster: dev}]}}]\n  template: {metadata: {name: '{{cluster}}'}, spec: {project: default}}\n`;

/** The CliError a call throws (message and exit status). */
function failure(fn: () => unknown): { message: string; exitCode: number } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    return { message: (err as CliError).message, exitCode: (err as CliError).exitCode };
  }
  throw new Error('expected a failure');
}

describe('readApplicationSets', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('returns every set of every file in order, with its file, document number and request', () => {
    const a = file('a.yaml', `${set('one', '  namespace: team-a\n')}---\n${set('two')}`);
    const three = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'ApplicationSet',
      metadata: { name: 'three', labels: { env: 'dev' } },
      spec: { generators: [] },
      status: { conditions: [] },
    };
    const b = file('b.json', JSON.stringify(three));
    const docs = readApplicationSets([a, b]);
    expect(docs.map((d) => [d.origin, d.index, d.qualifiedName])).toEqual([
      [a, 1, 'team-a/one'],
      [a, 2, 'two'],
      [b, 1, 'three'],
    ]);
    expect(docs[0]!.applicationSet.spec).toEqual({
      generators: [{ list: { elements: [{ cluster: 'dev' }] } }],
      template: { metadata: { name: '{{cluster}}' }, spec: { project: 'default' } },
    });
    expect(docs[2]!.applicationSet.metadata?.labels).toEqual({ env: 'dev' });
    // A status in the file is not sent.
    expect(docs[2]!.applicationSet.status).toBeUndefined();
  });

  it('names the file and document of a document that is not an ApplicationSet', () => {
    const p = file(
      'mixed.yaml',
      `${set('one')}---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: x}\nspec: {}\n`,
    );
    expect(failure(() => readApplicationSets([p]))).toEqual({
      message: `${p} (document 2): kind: expected ApplicationSet, found "Application"`,
      exitCode: 2,
    });
  });

  it("refuses a set without a name with Argo CD's words", () => {
    const p = file('noname.yaml', set('one').replace('  name: one\n', '  labels: {a: b}\n'));
    expect(failure(() => readApplicationSets([p])).message).toBe(
      `${p} (document 1): metadata.name: ApplicationSet does not have Name field set`,
    );
  });

  it('names the document with invalid YAML, and refuses an alias bomb with the shared reader’s message', () => {
    const bad = file('bad.yaml', `${set('one')}---\n${set('two')}---\nspec: [unclosed\n`);
    const e = failure(() => readApplicationSets([bad]));
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(
      new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(document 3\\): invalid YAML: `),
    );
    const bomb = file(
      'bomb.yaml',
      [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        ...'bcdefghi'
          .split('')
          .map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`),
      ].join('\n'),
    );
    expect(failure(() => readApplicationSets([bomb])).message).toBe(
      `${bomb} (document 1): invalid YAML: aliases expand more than 100 times (refused as a possible alias bomb)`,
    );
  });

  it('refuses two documents defining the same set, and input with no document', () => {
    const a = file('dup-a.yaml', set('one'));
    const b = file('dup-b.yaml', `${set('two')}---\n${set('one')}`);
    expect(failure(() => readApplicationSets([a, b])).message).toBe(
      `${b} (document 2): ApplicationSet one is also defined in ${a} (document 1)`,
    );
    expect(failure(() => readApplicationSets([file('empty.yaml', '---\n')]))).toEqual({
      message: 'no ApplicationSets found in the input',
      exitCode: 2,
    });
    expect(failure(() => readApplicationSets([path.join(dir, 'missing.yaml')])).message).toBe(
      `cannot read ${path.join(dir, 'missing.yaml')}: ENOENT`,
    );
  });
});

describe('applicationSetProblem', () => {
  it('checks what the CLI relies on: an object, kind, apiVersion, name, spec', () => {
    expect(applicationSetProblem(['a'])).toBe('expected an ApplicationSet object');
    expect(applicationSetProblem({ metadata: { name: 'a' }, spec: {} })).toBe(
      'kind: expected ApplicationSet, found none',
    );
    expect(
      applicationSetProblem({ apiVersion: 'v1', kind: 'ApplicationSet', metadata: { name: 'a' }, spec: {} }),
    ).toBe('apiVersion: expected argoproj.io/v1alpha1, found "v1"');
    expect(
      applicationSetProblem({ kind: 'ApplicationSet', metadata: { name: 'a', namespace: 3 }, spec: {} }),
    ).toBe('metadata.namespace: expected a string');
    expect(applicationSetProblem({ kind: 'ApplicationSet', metadata: { name: 'a' } })).toBe(
      'spec: expected an object',
    );
    expect(
      applicationSetProblem({ kind: 'ApplicationSet', metadata: { name: 'a' }, spec: {} }),
    ).toBeUndefined();
  });
});

describe('parseQualifiedName', () => {
  it("takes argocd's namespace/name, or the name with --appset-namespace", () => {
    expect(parseQualifiedName('team-a/guestbook', 'ignored')).toEqual({
      name: 'guestbook',
      namespace: 'team-a',
    });
    expect(parseQualifiedName('guestbook', 'team-b')).toEqual({ name: 'guestbook', namespace: 'team-b' });
    expect(parseQualifiedName('guestbook')).toEqual({ name: 'guestbook', namespace: '' });
  });
});
