// gitops-engine pkg/health/health_pod.go as vendored in argo-cd (with the
// argocd.argoproj.io/ignore-restart-policy annotation, not honoured on hooks).
import { condition, requireVersion } from './gvk.js';
import { annotation, field, list, num, str, type Obj } from '../object.js';
import type { HealthStatus, HealthStatusCode, LiveObject } from '../types.js';

export const IGNORE_RESTART_POLICY_ANNOTATION = 'argocd.argoproj.io/ignore-restart-policy';

/** gitops-engine hook.IsHook: an Argo CD hook (not only Skip) or a Helm hook. */
export function isHook(obj: LiveObject): boolean {
  const argo = annotation(obj, 'argocd.argoproj.io/hook');
  if (argo !== undefined) {
    const types = argo
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    return !(types.includes('Skip') && types.length === 1);
  }
  return annotation(obj, 'helm.sh/hook') !== undefined;
}

// Waiting reasons of a container in error (ErrImagePull, CrashLoopBackOff, CreateContainerConfigError, …).
const inError = (reason: string) =>
  reason.startsWith('Err') || reason.endsWith('Error') || reason.endsWith('BackOff');

function failMessage(ctr: Obj): string {
  const terminated = field(ctr, 'state', 'terminated');
  if (terminated === undefined || terminated === null) return '';
  if (str(terminated, 'message') !== '') return str(terminated, 'message');
  if (str(terminated, 'reason') === 'OOMKilled') return 'OOMKilled';
  const code = num(terminated, 'exitCode');
  if (code !== 0) return `container ${JSON.stringify(str(ctr, 'name'))} failed with exit code ${code}`;
  return '';
}

export function podHealth(obj: LiveObject): HealthStatus {
  requireVersion(obj, 'Pod', ['v1']);
  const policy = str(obj, 'spec', 'restartPolicy');
  const longRunning =
    policy === 'Always' || (annotation(obj, IGNORE_RESTART_POLICY_ANNOTATION) === 'true' && !isHook(obj));
  const containers = list(obj, 'status', 'containerStatuses');
  const message = str(obj, 'status', 'message');
  // Only long-running Pods: a hook Pod stuck in ImagePullBackOff must not fail the hook early.
  if (longRunning) {
    const messages = containers
      .map((c) => field(c, 'state', 'waiting'))
      .filter((w) => w !== undefined && w !== null && inError(str(w, 'reason')))
      .map((w) => str(w, 'message'));
    if (messages.length > 0) return { status: 'Degraded', message: messages.join(', ') };
  }
  const at = (status: HealthStatusCode): HealthStatus => ({ status, message });
  switch (str(obj, 'status', 'phase')) {
    case 'Pending':
      return at('Progressing');
    case 'Succeeded':
      return at('Healthy');
    case 'Failed': {
      if (message !== '') return at('Degraded');
      for (const ctr of [...list(obj, 'status', 'initContainerStatuses'), ...containers]) {
        const m = failMessage(ctr);
        if (m !== '') return { status: 'Degraded', message: m };
      }
      return { status: 'Degraded', message: '' };
    }
    case 'Running': {
      if (longRunning) {
        const ready = condition(list(obj, 'status', 'conditions'), 'Ready');
        if (ready?.status === 'True') return at('Healthy');
        const terminatedBefore = containers.some((c) => {
          const t = field(c, 'lastState', 'terminated');
          return t !== undefined && t !== null;
        });
        return at(terminatedBefore ? 'Degraded' : 'Progressing');
      }
      // OnFailure/Never: a finite Pod (typically a hook) is Progressing until it succeeds.
      if (policy === 'OnFailure' || policy === 'Never') return at('Progressing');
    }
  }
  return at('Unknown');
}
