// Turns the policy library's field-path issues and zod errors into the workspace's ValidationError,
// so every transport reports bad input the same way: `spec.destinationServiceAccounts[2].namespace: invalid glob`.
import { ValidationError, type FieldViolation } from '@capstan/service';
import { issuesFromZod, type PolicyIssue } from '@capstan/policy';
import type { z } from 'zod';

export function violationsOf(issues: readonly PolicyIssue[], prefix = ''): FieldViolation[] {
  return issues.map((i) => ({
    field:
      prefix === ''
        ? i.path || '(root)'
        : i.path === ''
          ? prefix
          : i.path.startsWith('[')
            ? `${prefix}${i.path}`
            : `${prefix}.${i.path}`,
    description: i.message,
  }));
}

export function invalid(field: string, description: string): ValidationError {
  return new ValidationError([{ field, description }]);
}

/** Parses with a zod schema or throws a ValidationError naming every bad field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(violationsOf(issuesFromZod(result.error), prefix));
  return result.data;
}
