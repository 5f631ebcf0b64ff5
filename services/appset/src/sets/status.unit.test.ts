// Status conditions as Argo CD's controller writes them.
import { describe, expect, it } from 'vitest';
import { emptyStatus, nextStatus, PARAMETERS_GENERATED_MESSAGE, UP_TO_DATE_MESSAGE } from './status.js';

const t0 = new Date('2026-11-25T00:00:00Z');
const t1 = new Date('2026-11-25T00:05:00Z');
const app = { metadata: { name: 'a', namespace: 'argocd' }, spec: { project: 'team-a' } } as never;

describe('ApplicationSet status', () => {
  it("reports success with Argo CD's reasons and messages and lists the Applications", () => {
    const s = nextStatus(emptyStatus(), { kind: 'applied', applications: [app], digest: 'd' }, t0);
    expect(
      s.conditions.map(({ type, status, reason, message }) => ({ type, status, reason, message })),
    ).toEqual([
      {
        type: 'ParametersGenerated',
        status: 'True',
        reason: 'ParametersGenerated',
        message: PARAMETERS_GENERATED_MESSAGE,
      },
      {
        type: 'ResourcesUpToDate',
        status: 'True',
        reason: 'ApplicationSetUpToDate',
        message: UP_TO_DATE_MESSAGE,
      },
      {
        type: 'ErrorOccurred',
        status: 'False',
        reason: 'ApplicationSetUpToDate',
        message: UP_TO_DATE_MESSAGE,
      },
    ]);
    expect(s.resources).toEqual([
      {
        group: 'argoproj.io',
        version: 'v1alpha1',
        kind: 'Application',
        name: 'a',
        namespace: 'argocd',
        project: 'team-a',
      },
    ]);
    expect(s.appliedDigest).toBe('d');
  });

  it('on a generation error: no parameters, the error, resources not up to date; the last applied list kept', () => {
    const ok = nextStatus(emptyStatus(), { kind: 'applied', applications: [app], digest: 'd' }, t0);
    const s = nextStatus(
      ok,
      { kind: 'generation-failed', reason: 'RenderTemplateParamsError', message: 'boom' },
      t1,
    );
    expect(s.conditions).toEqual([
      {
        type: 'ParametersGenerated',
        status: 'False',
        reason: 'ErrorOccurred',
        message: 'boom',
        lastTransitionTime: t1.toISOString(),
      },
      {
        type: 'ErrorOccurred',
        status: 'True',
        reason: 'RenderTemplateParamsError',
        message: 'boom',
        lastTransitionTime: t1.toISOString(),
      },
      {
        type: 'ResourcesUpToDate',
        status: 'False',
        reason: 'ErrorOccurred',
        message: 'boom',
        lastTransitionTime: t1.toISOString(),
      },
    ]);
    expect(s.resources).toEqual(ok.resources);
    expect(s.appliedDigest).toBe('d');
  });

  it('keeps lastTransitionTime while a condition keeps its status', () => {
    const a = nextStatus(
      emptyStatus(),
      { kind: 'apply-failed', reason: 'UpdateApplicationError', message: 'x' },
      t0,
    );
    const b = nextStatus(a, { kind: 'apply-failed', reason: 'UpdateApplicationError', message: 'y' }, t1);
    const params = b.conditions.find((c) => c.type === 'ParametersGenerated')!;
    expect(params).toMatchObject({ status: 'True', lastTransitionTime: t0.toISOString() });
    expect(b.conditions.find((c) => c.type === 'ErrorOccurred')).toMatchObject({
      message: 'y',
      lastTransitionTime: t0.toISOString(),
    });
  });
});
