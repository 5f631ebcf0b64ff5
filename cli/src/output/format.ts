// Output as argocd users expect: a table by default, -o json or -o yaml for scripts, -o name for
// just the names.
import Table from 'cli-table3';
import { stringify } from 'yaml';
import { Option } from 'commander';
import { CliError } from '../errors.js';

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml' | 'name';

export const outputOption = (
  choices: readonly OutputFormat[] = ['table', 'wide', 'json', 'yaml', 'name'],
  defaultFormat: OutputFormat = 'table',
) => new Option('-o, --output <format>', 'output format').choices(choices).default(defaultFormat);

export function printJsonOrYaml(format: OutputFormat, value: unknown): boolean {
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return true;
  }
  if (format === 'yaml') {
    process.stdout.write(stringify(value));
    return true;
  }
  return false;
}

/** Prints rows as a table (or names, json, yaml of the raw values). */
export function printList<T>(
  format: OutputFormat,
  items: T[],
  columns: [string, (t: T) => unknown][],
  raw: (t: T) => unknown,
  name: (t: T) => string,
): void {
  if (printJsonOrYaml(format, items.map(raw))) return;
  if (format === 'name') {
    for (const t of items) process.stdout.write(`${name(t)}\n`);
    return;
  }
  const table = new Table({
    head: columns.map(([h]) => h),
    style: { head: [], border: [] },
    chars: borderless,
  });
  for (const t of items) table.push(columns.map(([, f]) => String(f(t) ?? '')));
  process.stdout.write(`${table.toString()}\n`);
}

/** Prints one object as key/value lines (or json, yaml). */
export function printObject(format: OutputFormat, raw: unknown, fields: [string, unknown][]): void {
  if (printJsonOrYaml(format, raw)) return;
  if (format === 'name') throw new CliError('-o name applies to lists');
  const width = Math.max(...fields.map(([k]) => k.length));
  for (const [k, v] of fields) {
    // trimmed, so that a heading with no value (argocd's `Source:`) leaves no trailing blanks
    const line = `${`${k}:`.padEnd(width + 2)}${v ?? ''}`;
    process.stdout.write(`${line.trimEnd()}\n`);
  }
}

const borderless = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
};
