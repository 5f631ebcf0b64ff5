// A GenerateManifests request's source options, from the message into Argo CD's shape, checked
// with the rules the api applies when the Application is written (@capstan/policy: bounds, files
// inside the repository, no URLs, forms helm and kustomize cannot misread). The repo service is
// an edge of its own: every caller's request is checked again here. Defaults ('' / false / empty)
// are dropped, so one set of options has one form (and one manifest-cache key).
import type { repov1 } from '@capstan/proto';
import {
  DirectorySourceSchema,
  HelmSourceSchema,
  issuesFromZod,
  KustomizeSourceSchema,
  sourceOptionIssues,
  type DirectorySource,
  type HelmSource,
  type KustomizeSource,
  type PolicyIssue,
} from '@capstan/policy';
import { ValidationError } from '@capstan/service';
import type { z } from 'zod';

export interface SourceOptions {
  helm?: HelmSource;
  kustomize?: KustomizeSource;
  directory?: DirectorySource;
}

/** The value without its default parts ('' / false / [] / {}); undefined when nothing is left. */
export function compact(value: unknown): unknown {
  if (value === '' || value === false || value === undefined || value === null) return undefined;
  if (Array.isArray(value)) {
    const items = value.map((v) => compact(v) ?? (typeof v === 'object' ? {} : v));
    return items.length > 0 ? items : undefined;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const c = compact(v);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return value;
}

function helmOf(h: repov1.HelmSource): unknown {
  const { valuesObjectJson, ...rest } = h;
  let valuesObject: unknown;
  if (valuesObjectJson) {
    try {
      valuesObject = JSON.parse(valuesObjectJson);
    } catch {
      throw new ValidationError([
        { field: 'source.helm.valuesObjectJson', description: 'is not valid JSON' },
      ]);
    }
  }
  return { ...(compact(rest) as object), ...(valuesObject !== undefined ? { valuesObject } : {}) };
}

function check<T>(schema: z.ZodType<T>, value: unknown, at: string[], issues: PolicyIssue[]): T | undefined {
  if (value === undefined) return undefined;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  issues.push(...issuesFromZod(parsed.error, at));
  return undefined;
}

/** The source's options in Argo CD's shape, or a ValidationError naming every bad field. */
export function sourceOptionsOf(
  source: repov1.ManifestSource | undefined,
  refSources?: readonly { name: string }[],
): SourceOptions {
  if (!source) return {};
  const issues: PolicyIssue[] = [];
  const helm = check(HelmSourceSchema, source.helm && helmOf(source.helm), ['source', 'helm'], issues);
  const kustomize = check(
    KustomizeSourceSchema,
    source.kustomize && (compact(source.kustomize) ?? {}),
    ['source', 'kustomize'],
    issues,
  );
  const directory = check(
    DirectorySourceSchema,
    source.directory && (compact(source.directory) ?? {}),
    ['source', 'directory'],
    issues,
  );
  const options: SourceOptions = {
    ...(helm ? { helm } : {}),
    ...(kustomize ? { kustomize } : {}),
    ...(directory ? { directory } : {}),
  };
  // A multi-source Application's `$name/…` files may name only the ref sources it sent.
  const refs = refSources ? { refs: new Set(refSources.map((r) => r.name)) } : undefined;
  if (issues.length === 0)
    issues.push(...sourceOptionIssues({ path: source.path, ...options }, 'source', refs));
  if (issues.length > 0)
    throw new ValidationError(issues.map((i) => ({ field: i.path, description: i.message })));
  return options;
}
