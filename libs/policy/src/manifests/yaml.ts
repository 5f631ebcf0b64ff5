// The one reader of tenant YAML (apply, `capstan sync explain`, the CLI's -f files, manifests rendered
// from a tenant's repository): multi-document text parsed by the `yaml` library with bounds, so that
// no input can exhaust memory or the stack. The bounds: the text's size (checked before parsing), the
// library's own alias bound (`maxAliasCount`, which refuses "billion laughs" alias bombs while
// expanding), the library's own guard against nesting that would overflow the stack while composing,
// and then InputLimits on every decoded value (depth, string, list and object sizes, storable text).
import { parseAllDocuments } from 'yaml';
import { ManifestError, type PolicyIssue } from '../issues.js';
import { DEFAULT_INPUT_LIMITS, inputLimitIssues, type InputLimits } from '../input/limits.js';

export interface YamlLimits extends InputLimits {
  /** Largest text, in UTF-8 bytes. */
  readonly maxBytes: number;
  /** Most alias expansions per document (the `yaml` library's maxAliasCount). */
  readonly maxAliasCount: number;
}

export const DEFAULT_YAML_LIMITS: YamlLimits = {
  ...DEFAULT_INPUT_LIMITS,
  maxBytes: 8 * 1024 * 1024,
  maxAliasCount: 100,
};

/** One document of a YAML text: its decoded value, or why it cannot be read. */
export type YamlDocument =
  | { readonly index: number; readonly value: unknown; readonly issues?: undefined }
  | { readonly index: number; readonly value?: undefined; readonly issues: readonly PolicyIssue[] };

/**
 * Parses every document of `text` (index from 1). A text over the size bound throws ManifestError
 * before anything is parsed; any other problem is reported on its document, so callers can report
 * every bad document at once.
 */
export function readYamlDocuments(
  text: string,
  origin: string,
  limits: YamlLimits = DEFAULT_YAML_LIMITS,
): YamlDocument[] {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxBytes)
    throw new ManifestError(origin, [
      { path: '', message: `YAML text of ${bytes} bytes is larger than ${limits.maxBytes} bytes` },
    ]);
  const out: YamlDocument[] = [];
  parseAllDocuments(text, { prettyErrors: false }).forEach((doc, i) => {
    const index = i + 1;
    if (doc.errors.length > 0) {
      out.push({
        index,
        issues: doc.errors.map((e) => ({
          path: '',
          message:
            e.code === 'RESOURCE_EXHAUSTION'
              ? `invalid YAML: nested too deeply (more than ${limits.maxDepth} levels are refused)`
              : `invalid YAML: ${e.message.split('\n')[0]}`,
        })),
      });
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: limits.maxAliasCount });
    } catch (err) {
      const alias = err instanceof ReferenceError && err.message.startsWith('Excessive alias count');
      out.push({
        index,
        issues: [
          {
            path: '',
            message: alias
              ? `invalid YAML: aliases expand more than ${limits.maxAliasCount} times (refused as a possible alias bomb)`
              : `invalid YAML: ${err instanceof RangeError ? `nested too deeply (more than ${limits.maxDepth} levels are refused)` : err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
          },
        ],
      });
      return;
    }
    const issues = inputLimitIssues(value, limits);
    out.push(issues.length > 0 ? { index, issues } : { index, value });
  });
  return out;
}
