// One Argo CD configuration object checked as the api checks it when it is applied (pure, no I/O):
// checkArgoSettings key by key, and argocd-rbac-cm's policy.csv and policy.<name>.csv parsed as the
// RBAC policy reads them (an unknown resource or action, a truncated line are problems naming the
// line). Used by the api's apply and by `capstan admin settings validate`, so a file the CLI calls
// valid is one the api accepts.
import { parsePolicyCsv, PolicyError } from '@capstan/rbac/policy-csv';
import { checkArgoSettings } from './argo-settings.js';
import type { ArgoConfigObject } from './argo-keys.js';

export interface SettingsObjectProblem {
  /** `argocd-cm: key`, or `argocd-rbac-cm: policy.csv:3` for a policy line. */
  readonly field: string;
  readonly description: string;
}

export interface SettingsObjectCheck {
  /** `argocd-cm: key: message`, for the caller to return or print. */
  readonly warnings: string[];
  /** Refusals: wrong values always, unknown and not implemented keys in strict mode. */
  readonly problems: SettingsObjectProblem[];
}

const POLICY_KEY = /^policy(\.[^.]+)?\.csv$/;

function policyProblems(data: Readonly<Record<string, unknown>>): SettingsObjectProblem[] {
  const out: SettingsObjectProblem[] = [];
  for (const key of Object.keys(data).sort()) {
    const text = data[key];
    if (!POLICY_KEY.test(key) || typeof text !== 'string') continue;
    try {
      parsePolicyCsv(text, `argocd-rbac-cm: ${key}`);
    } catch (err) {
      if (!(err instanceof PolicyError)) throw err;
      out.push(...err.problems.map((p) => ({ field: p.where, description: p.message })));
    }
  }
  return out;
}

/** A note for each implemented key the services read only at start (never silent about when). */
function startOnlyNotes(object: ArgoConfigObject, mapped: ReturnType<typeof checkArgoSettings>['mapped']) {
  return mapped
    .filter((m) => !m.spec.capstan.live)
    .map(
      (m) =>
        `${object}: ${m.key}: read at start by the ${m.spec.capstan.service} service: takes effect at its next start (as in Argo CD)`,
    );
}

export function checkSettingsObject(
  object: ArgoConfigObject,
  data: Readonly<Record<string, unknown>>,
  opts: { strict: boolean },
): SettingsObjectCheck {
  const check = checkArgoSettings(object, data, opts);
  const problems: SettingsObjectProblem[] = check.problems.map((p) => ({
    field: p.key,
    description: p.message,
  }));
  if (object === 'argocd-rbac-cm') problems.push(...policyProblems(data));
  return {
    warnings: [
      ...check.warnings.map((w) => `${w.key}: ${w.message}`),
      ...startOnlyNotes(object, check.mapped),
    ],
    problems,
  };
}
