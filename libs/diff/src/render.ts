// `argocd app diff`'s output: per resource a "===== group/Kind namespace/name ======" header, then
// a `diff -u` of the live object's YAML (-) and git's (+), keys sorted as Go's YAML writer sorts them.
import { structuredPatch } from 'diff';
import { stringify } from 'yaml';
import { groupOf, type KubeObjectLike } from './types.js';

export interface RenderOptions {
  /** ANSI colours: removed lines red, added green, hunk headers cyan. */
  color?: boolean;
  /** Lines of context around each change (diff -u's default 3). */
  context?: number;
}

const RED = '\u001b[31m';
const GREEN = '\u001b[32m';
const CYAN = '\u001b[36m';
const RESET = '\u001b[0m';

export function toYaml(obj: KubeObjectLike | undefined): string {
  return obj === undefined
    ? ''
    : stringify(obj, { sortMapEntries: true, lineWidth: 0, aliasDuplicateObjects: false });
}

/** The header Argo prints before each resource's diff. */
export function diffHeader(obj: KubeObjectLike): string {
  const metadata = obj.metadata ?? {};
  return `===== ${groupOf(obj.apiVersion)}/${obj.kind ?? ''} ${metadata.namespace ?? ''}/${metadata.name ?? ''} ======`;
}

function paint(line: string, color: boolean): string {
  if (!color) return line;
  if (line.startsWith('+')) return `${GREEN}${line}${RESET}`;
  if (line.startsWith('-')) return `${RED}${line}${RESET}`;
  if (line.startsWith('@@')) return `${CYAN}${line}${RESET}`;
  return line;
}

/**
 * The unified diff of one resource from live to target; '' when they render the same. Give it
 * what compareResource returns (predictedLive or normalizedTarget, normalizedLive): Secrets masked.
 */
export function renderDiff(
  target: KubeObjectLike | undefined,
  live: KubeObjectLike | undefined,
  options: RenderOptions = {},
): string {
  const identity = target ?? live;
  if (!identity) return '';
  const before = toYaml(live);
  const after = toYaml(target);
  if (before === after) return '';
  const name = identity.metadata?.name ?? '';
  const patch = structuredPatch(`${name}-live.yaml`, name, before, after, '', '', {
    context: options.context ?? 3,
  });
  const color = options.color ?? false;
  const lines = [
    diffHeader(identity),
    paint(`--- ${patch.oldFileName}`, color),
    paint(`+++ ${patch.newFileName}`, color),
  ];
  for (const hunk of patch.hunks) {
    lines.push(paint(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`, color));
    for (const line of hunk.lines) if (!line.startsWith('\\')) lines.push(paint(line, color));
  }
  return `${lines.join('\n')}\n`;
}
