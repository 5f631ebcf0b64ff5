import { describe, expect, it } from 'vitest';
import { compileCondition, ExprError } from './expr.js';

const app = (status: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'guestbook' }) => ({
  app: { metadata, status },
});

// The conditions of Argo CD's notifications catalog (notifications_catalog/triggers).
const SUCCEEDED = "app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']";
const FAILED = "app.status.operationState != nil and app.status.operationState.phase in ['Error', 'Failed']";
const DEGRADED = "app.status.health.status == 'Degraded'";
const UNKNOWN = "app.status.sync.status == 'Unknown'";
const DELETED = 'app.metadata.deletionTimestamp != nil';

describe('notification conditions (expr subset)', () => {
  it("evaluates the catalog's built-in conditions", () => {
    expect(compileCondition(SUCCEEDED).evaluate(app({ operationState: { phase: 'Succeeded' } }))).toBe(true);
    expect(compileCondition(SUCCEEDED).evaluate(app({ operationState: { phase: 'Running' } }))).toBe(false);
    expect(compileCondition(SUCCEEDED).evaluate(app({}))).toBe(false);
    expect(compileCondition(FAILED).evaluate(app({ operationState: { phase: 'Error' } }))).toBe(true);
    expect(compileCondition(FAILED).evaluate(app({ operationState: { phase: 'Failed' } }))).toBe(true);
    expect(compileCondition(DEGRADED).evaluate(app({ health: { status: 'Degraded' } }))).toBe(true);
    expect(compileCondition(DEGRADED).evaluate(app({ health: { status: 'Healthy' } }))).toBe(false);
    expect(compileCondition(UNKNOWN).evaluate(app({ sync: { status: 'Unknown' } }))).toBe(true);
    expect(compileCondition(DELETED).evaluate(app({}, { deletionTimestamp: '2026-11-25T00:00:00Z' }))).toBe(
      true,
    );
    expect(compileCondition(DELETED).evaluate(app({}))).toBe(false);
    expect(compileCondition('true').evaluate({})).toBe(true);
  });

  it('reads the rest of the subset: or, not, parentheses, optional chaining, double quotes, numbers', () => {
    const c = compileCondition(
      '!(app.status?.sync?.status == "Synced") || app.spec.replicas != 2 && not (app.x in [1, 2])',
    );
    expect(c.evaluate({ app: { status: { sync: { status: 'Synced' } }, spec: { replicas: 3 }, x: 5 } })).toBe(
      true,
    );
    expect(c.evaluate({ app: { status: { sync: { status: 'Synced' } }, spec: { replicas: 2 }, x: 5 } })).toBe(
      false,
    );
    expect(compileCondition("app.a == 'it\\'s'").evaluate({ app: { a: "it's" } })).toBe(true);
    // Members of non-objects and inherited members are nil.
    expect(compileCondition('app.name.length == nil').evaluate({ app: { name: 'x' } })).toBe(true);
    expect(compileCondition('app.constructor == nil').evaluate({ app: {} })).toBe(true);
  });

  it('refuses what it does not support, naming where', () => {
    expect(() => compileCondition('time.Parse(app.x)')).toThrow(ExprError);
    expect(() => compileCondition('time.Parse(app.x)')).toThrow('function calls are not supported');
    expect(() => compileCondition('app.a + 1 == 2')).toThrow('unsupported syntax at position 6');
    expect(() => compileCondition('app.a ==')).toThrow('expected a value at end of condition');
    expect(() => compileCondition('(app.a')).toThrow('expected ")"');
    expect(() => compileCondition('app. == 1')).toThrow('expected a member name');
    expect(() => compileCondition('app.a app.b')).toThrow('unexpected "app" at position 6');
    expect(() => compileCondition('x'.repeat(5000))).toThrow('longer than 4096');
  });
});
