import { describe, expect, it } from 'vitest';
import {
  deleteMode,
  deletionApproved,
  parseAppSyncOptions,
  parseResourceSyncOptions,
  pruneMode,
  writeMode,
} from './sync-options.js';

const annotated = (value: string) => ({
  metadata: { annotations: { 'argocd.argoproj.io/sync-options': value } },
});

describe('sync options', () => {
  it("given no options, when parsed, then Argo CD's defaults apply (but background prune)", () => {
    expect(parseAppSyncOptions(undefined)).toEqual({
      prune: undefined,
      delete: undefined,
      validate: true,
      createNamespace: false,
      pruneLast: false,
      applyOutOfSyncOnly: false,
      serverSideApply: undefined,
      replace: false,
      force: false,
      failOnSharedResource: false,
      prunePropagationPolicy: 'background',
      respectIgnoreDifferences: false,
      warnings: [],
    });
  });

  it('given every Application option, when parsed, then each is read', () => {
    const o = parseAppSyncOptions([
      'Prune=confirm',
      'Delete=false',
      'Validate=false',
      'CreateNamespace=true',
      'PruneLast=true',
      'ApplyOutOfSyncOnly=true',
      'ServerSideApply=false',
      'Replace=true',
      'Force=true',
      'FailOnSharedResource=true',
      'PrunePropagationPolicy=orphan',
      'RespectIgnoreDifferences=true',
      'SkipDryRunOnMissingResource=true',
    ]);
    expect(o).toMatchObject({
      prune: 'confirm',
      delete: 'false',
      validate: false,
      createNamespace: true,
      pruneLast: true,
      applyOutOfSyncOnly: true,
      serverSideApply: false,
      replace: true,
      force: true,
      failOnSharedResource: true,
      prunePropagationPolicy: 'orphan',
      respectIgnoreDifferences: true,
      warnings: [],
    });
  });

  it('given unknown options and values, when parsed, then they are ignored (as Argo does) with a warning each', () => {
    const o = parseAppSyncOptions(['CreateNamspace=true', 'PrunePropagationPolicy=later', ' Replace=true ']);
    expect(o.createNamespace).toBe(false);
    expect(o.prunePropagationPolicy).toBe('background');
    expect(o.replace).toBe(true);
    expect(o.warnings).toEqual([
      'unknown sync option "CreateNamspace=true" in spec.syncPolicy.syncOptions ignored',
      'sync option "PrunePropagationPolicy=later" in spec.syncPolicy.syncOptions ignored: PrunePropagationPolicy takes foreground, background, orphan',
    ]);
  });

  it('given a resource annotation, when parsed, then its comma separated options are trimmed and Application-only ones warned about', () => {
    const r = parseResourceSyncOptions(
      annotated('Prune=false, PruneLast=true,Validate=false,CreateNamespace=true'),
      'ConfigMap a/b',
    );
    expect(r).toMatchObject({ prune: 'false', pruneLast: true, validate: false });
    expect(r.warnings).toEqual([
      'sync option CreateNamespace in the argocd.argoproj.io/sync-options annotation of ConfigMap a/b ignored: it applies to Applications only',
    ]);
    expect(parseResourceSyncOptions({ metadata: {} })).toMatchObject({ prune: undefined, warnings: [] });
  });

  it('given options on both, when combined, then the resource overrides Prune, Delete and ServerSideApply and adds Replace, Force, PruneLast and Validate=false', () => {
    const app = parseAppSyncOptions(['Prune=false', 'Delete=false', 'ServerSideApply=true']);
    const none = parseResourceSyncOptions({});
    expect(pruneMode(app, none)).toEqual({ prune: 'false', last: false });
    expect(pruneMode(app, parseResourceSyncOptions(annotated('Prune=true')))).toEqual({
      prune: 'true',
      last: false,
    });
    expect(pruneMode(parseAppSyncOptions([]), parseResourceSyncOptions(annotated('PruneLast=true')))).toEqual(
      {
        prune: 'true',
        last: true,
      },
    );
    expect(deleteMode(app, none)).toBe('false');
    expect(deleteMode(app, parseResourceSyncOptions(annotated('Delete=true')))).toBe('true');
    expect(writeMode(app, parseResourceSyncOptions(annotated('ServerSideApply=false')))).toMatchObject({
      serverSideApply: false,
    });
    expect(
      writeMode(parseAppSyncOptions([]), parseResourceSyncOptions(annotated('Force=true,Replace=true'))),
    ).toEqual({
      replace: true,
      force: true,
      fieldValidation: 'Strict',
      serverSideApply: true,
    });
    expect(writeMode(parseAppSyncOptions(['Validate=false']), none).fieldValidation).toBe('Ignore');
    expect(
      writeMode(parseAppSyncOptions([]), parseResourceSyncOptions(annotated('Validate=false')))
        .fieldValidation,
    ).toBe('Ignore');
  });

  it('given a deletion-approved annotation, when checked, then only a timestamp after the previous operation confirms', () => {
    const since = new Date('2026-11-25T10:00:00Z');
    const at = (t: string) => ({ 'argocd.argoproj.io/deletion-approved': t });
    expect(deletionApproved(at('2026-11-25T10:05:00Z'), since)).toBe(true);
    expect(deletionApproved(at('2026-11-25T09:55:00Z'), since)).toBe(false);
    expect(deletionApproved(at('yesterday'), since)).toBe(false);
    expect(deletionApproved(undefined, since)).toBe(false);
  });
});
