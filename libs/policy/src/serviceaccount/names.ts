// ServiceAccount references as written in `defaultServiceAccount`, and the Kubernetes name rules
// they must satisfy. Kubernetes validates a namespace as an RFC 1123 label and a ServiceAccount
// name as an RFC 1123 subdomain (dots allowed); Capstan checks exactly that, so a name
// Kubernetes would accept is never refused and one it would reject never reaches a request.

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Characters Argo CD refuses in defaultServiceAccount: glob syntax and path separators. */
export const SERVICE_ACCOUNT_DISALLOWED_CHARS = '!*[]{}\\/';

export function dnsLabelProblem(value: string): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > 63) return `must be at most 63 characters, got ${value.length}`;
  if (!LABEL.test(value))
    return 'must be a DNS label (lowercase letters, digits and "-", starting and ending with a letter or digit)';
  return undefined;
}

export function dnsSubdomainProblem(value: string): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > 253) return `must be at most 253 characters, got ${value.length}`;
  if (!SUBDOMAIN.test(value))
    return 'must be a DNS subdomain (lowercase letters, digits, "-" and ".", each part starting and ending with a letter or digit)';
  return undefined;
}

export type ServiceAccountRef =
  /** `name`: the ServiceAccount lives in the destination namespace (or the Application's). */
  | { readonly kind: 'name'; readonly name: string }
  /** `namespace:name`. */
  | { readonly kind: 'qualified'; readonly namespace: string; readonly name: string }
  | { readonly kind: 'invalid'; readonly problem: string };

/** Parses and validates a defaultServiceAccount value (never throws). */
export function parseServiceAccountRef(value: string): ServiceAccountRef {
  if (value.trim() === '') return { kind: 'invalid', problem: 'must not be blank' };
  for (const ch of SERVICE_ACCOUNT_DISALLOWED_CHARS) {
    if (value.includes(ch))
      return {
        kind: 'invalid',
        problem: `must not contain ${JSON.stringify(ch)} (none of ${SERVICE_ACCOUNT_DISALLOWED_CHARS} is allowed)`,
      };
  }
  const parts = value.split(':');
  if (parts.length > 2)
    return { kind: 'invalid', problem: 'must be "name" or "namespace:name" (more than one ":")' };
  if (parts.length === 2) {
    const [namespace, name] = parts as [string, string];
    const nsProblem = dnsLabelProblem(namespace);
    if (nsProblem) return { kind: 'invalid', problem: `namespace ${JSON.stringify(namespace)} ${nsProblem}` };
    const nameProblem = dnsSubdomainProblem(name);
    if (nameProblem) return { kind: 'invalid', problem: `name ${JSON.stringify(name)} ${nameProblem}` };
    return { kind: 'qualified', namespace, name };
  }
  const nameProblem = dnsSubdomainProblem(value);
  if (nameProblem) return { kind: 'invalid', problem: `name ${JSON.stringify(value)} ${nameProblem}` };
  return { kind: 'name', name: value };
}

export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}
