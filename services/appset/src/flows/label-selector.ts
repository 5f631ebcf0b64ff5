// Kubernetes label selector strings (`kubectl -l`, `argocd appset list --selector`) parsed into the
// engine's LabelSelector, which selectorMatches applies: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
// `k notin (a,b)`, `k`, `!k`, comma-separated (commas inside parentheses belong to the set). Pure.
import type { LabelSelector } from '@capstan/appset-engine';
import { ValidationError } from '@capstan/service';

const KEY = '[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?';
const VALUE = '([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?';
const EQUALITY = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s+\\(([^)]*)\\)$`);
const EXISTS = new RegExp(`^(!?)\\s*(${KEY})$`);

function split(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim() !== '') parts.push(current.trim());
  return parts;
}

export function parseLabelSelector(selector: string, field = 'selector'): LabelSelector {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: NonNullable<LabelSelector['matchExpressions']> = [];
  if (selector.length > 4096)
    throw new ValidationError([{ field, description: 'is longer than 4096 characters' }]);
  for (const part of split(selector)) {
    let m = EQUALITY.exec(part);
    if (m) {
      const [key, op, value] = [m[1]!, m[3]!, m[4] ?? ''];
      if (op === '!=') matchExpressions.push({ key, operator: 'NotIn', values: [value] });
      else matchLabels[key] = value;
      continue;
    }
    m = SET.exec(part);
    if (m) {
      const values = m[4]!
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      matchExpressions.push({ key: m[1]!, operator: m[3] === 'in' ? 'In' : 'NotIn', values });
      continue;
    }
    m = EXISTS.exec(part);
    if (m) {
      matchExpressions.push({ key: m[2]!, operator: m[1] ? 'DoesNotExist' : 'Exists', values: undefined });
      continue;
    }
    throw new ValidationError([{ field, description: `${JSON.stringify(part)} is not a label requirement` }]);
  }
  return { matchLabels, matchExpressions };
}
