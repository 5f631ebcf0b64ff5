// A line diff of two YAML-ish texts (desired against live), by longest common subsequence: small
// manifests only (bounded below), which is what one resource is.
export type DiffLine = { op: ' ' | '-' | '+'; text: string };

const MAX_LINES = 4000;

export function lineDiff(a: string, b: string): DiffLine[] {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length > MAX_LINES || y.length > MAX_LINES)
    return [
      ...x.map((text) => ({ op: '-' as const, text })),
      ...y.map((text) => ({ op: '+' as const, text })),
    ];
  const n = x.length;
  const m = y.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push({ op: ' ', text: x[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: '-', text: x[i++]! });
    else out.push({ op: '+', text: y[j++]! });
  }
  while (i < n) out.push({ op: '-', text: x[i++]! });
  while (j < m) out.push({ op: '+', text: y[j++]! });
  return out;
}

/** A manifest as the api sends it (a JSON string, maybe empty) as indented JSON for reading. */
export function pretty(state: string | undefined): string {
  if (!state || state === 'null') return '';
  try {
    return JSON.stringify(JSON.parse(state), null, 2);
  } catch {
    return state;
  }
}
