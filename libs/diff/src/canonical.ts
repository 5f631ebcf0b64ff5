// Values the API server canonicalises must compare equal: resource quantities (`0.5` = `500m`,
// `1Gi` = `1073741824`) and int-or-string fields (`port: 80` = `port: "80"`). Applied only where
// Kubernetes uses those types, so that an env value "1k" never equals "1000".

const QUANTITY_PARENTS = new Set([
  'limits',
  'requests',
  'hard',
  'capacity',
  'allocatable',
  'overhead',
  'used',
]);
const QUANTITY_KEYS = new Set(['sizeLimit', 'storage']);
const INT_OR_STRING_KEYS = new Set([
  'port',
  'targetPort',
  'containerPort',
  'nodePort',
  'hostPort',
  'maxSurge',
  'maxUnavailable',
  'minAvailable',
]);

const QUANTITY =
  /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d{1,3}))?$/;
const DECIMAL_EXP: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_EXP: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/** An exact rational: num / den. */
interface Rational {
  num: bigint;
  den: bigint;
}

/** Parses a Kubernetes resource quantity exactly (bounded: 64 characters, exponents of 3 digits). */
export function parseQuantity(value: unknown): Rational | undefined {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || text.length > 64) return undefined;
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const [, sign, digits, suffix, exponent] = match as unknown as [string, string, string, string?, string?];
  const [whole, fraction = ''] = digits.split('.');
  let num = BigInt(`${whole || '0'}${fraction}`) * (sign === '-' ? -1n : 1n);
  let den = 10n ** BigInt(fraction.length);
  const exp = suffix ? DECIMAL_EXP[suffix] : exponent ? Number(exponent) : 0;
  if (exp !== undefined && exp !== 0) {
    if (exp > 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  }
  const binary = suffix ? BINARY_EXP[suffix] : undefined;
  if (binary !== undefined) num *= 2n ** BigInt(binary);
  return { num, den };
}

function sameQuantity(a: unknown, b: unknown): boolean {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  return x !== undefined && y !== undefined && x.num * y.den === y.num * x.den;
}

function sameIntOrString(a: unknown, b: unknown): boolean {
  const asText = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? String(v) : v);
  return typeof asText(a) === 'string' && asText(a) === asText(b);
}

/** Whether two scalars are the same value once the API server has canonicalised them. */
export function canonicallyEqual(
  target: unknown,
  live: unknown,
  key: string,
  parentKey: string | undefined,
): boolean {
  if (target === live) return true;
  if (QUANTITY_KEYS.has(key) || (parentKey !== undefined && QUANTITY_PARENTS.has(parentKey))) {
    if (sameQuantity(target, live)) return true;
  }
  return INT_OR_STRING_KEYS.has(key) && sameIntOrString(target, live);
}
