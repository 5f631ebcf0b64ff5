// Argo CD's configuration objects applied with `capstan apply -f` (argocd-cm, argocd-rbac-cm,
// argocd-cmd-params-cm, Secret argocd-secret): checked key by key (@capstan/policy
// checkArgoSettings), stored as versions of the settings/<name> aggregate, each change one
// io.capstan.settings.changed.v1 event and one audit.settings_changes row in the same transaction.
// Unknown and not implemented keys are warnings returned to the caller (refusals with
// settings.strict); a wrong value refuses the apply naming the key. Secret values are never stored,
// published, audited or returned: only which keys are set; the values of the sensitive keys Capstan
// implements (argocd-secret's webhook secrets) are kept sealed in api.settings_secrets
// (settings-secrets.ts), written in the same transaction.
import type { Kysely, Transaction } from 'kysely';
import { appendAudit, type SettingsKeyChange } from '@capstan/db';
import { checkSettingsObject, isSensitiveArgoKey, type ArgoConfigObject } from '@capstan/policy';
import { ValidationError } from '@capstan/service';
import type { ApiDatabase } from '../support/db.table.js';
import { runAggregate, type WriteOutcome } from '../support/aggregate.js';
import type { RequestContext } from '../support/request.js';
import { actorOf } from '../auth/principal.js';
import type { Keyring } from '@capstan/sealing';
import { storeSealedValues } from './settings-secrets.js';

export const SETTINGS_CHANGED = 'io.capstan.settings.changed.v1';

export interface SettingsItem {
  object: ArgoConfigObject;
  /** Every key as given (values checked to be strings by checkSettings). */
  data: Record<string, string>;
}

interface SettingsState {
  data: Record<string, string>;
  sensitiveKeys: string[];
}

interface SettingsChanged {
  type: typeof SETTINGS_CHANGED;
  data: {
    object: ArgoConfigObject;
    version: number;
    data: Record<string, string>;
    sensitiveKeys: string[];
    changedKeys: string[];
  };
}

/**
 * The problems of an object's keys as one ValidationError (field: `argocd-cm: key`), and its warnings:
 * @capstan/policy checkSettingsObject, the check `capstan admin settings validate` runs too.
 */
export function checkSettings(
  item: { object: ArgoConfigObject; data: Record<string, unknown> },
  strict: boolean,
): { warnings: string[] } {
  const check = checkSettingsObject(item.object, item.data, { strict });
  if (check.problems.length > 0) throw new ValidationError(check.problems);
  return { warnings: check.warnings };
}

function changesOf(before: SettingsState, after: SettingsState): SettingsKeyChange[] {
  const out: SettingsKeyChange[] = [];
  const keys = new Set([...Object.keys(before.data), ...Object.keys(after.data)]);
  for (const key of [...keys].sort()) {
    const b = before.data[key];
    const a = after.data[key];
    if (b === a) continue;
    if (b === undefined) out.push({ key, change: 'added', after: a! });
    else if (a === undefined) out.push({ key, change: 'removed', before: b });
    else out.push({ key, change: 'changed', before: b, after: a });
  }
  // Sensitive values are not kept: a sensitive key given again counts as changed, never with values.
  for (const key of new Set([...before.sensitiveKeys, ...after.sensitiveKeys])) {
    const had = before.sensitiveKeys.includes(key);
    const has = after.sensitiveKeys.includes(key);
    out.push({ key, change: had && has ? 'changed' : has ? 'added' : 'removed' });
  }
  return out.sort((x, y) => x.key.localeCompare(y.key));
}

export interface AppliedObject {
  object: ArgoConfigObject;
  version: number;
  data: Record<string, string>;
  sensitiveKeys: string[];
  actor: string;
  appliedAt: Date;
}

export class SettingsService {
  constructor(
    private readonly deps: {
      db: Kysely<ApiDatabase>;
      /** settings.strict of the api: unknown and not implemented keys refuse the apply. */
      strict: boolean;
      /** Seals the values of implemented sensitive keys (argocd-secret's webhook secrets). */
      keyring: Keyring;
      /** Told after every applied change on this replica (the RBAC policy reloads at once). */
      onChanged?: () => Promise<void>;
    },
  ) {}

  check(item: SettingsItem): { warnings: string[] } {
    return checkSettings(item, this.deps.strict);
  }

  async put(
    ctx: RequestContext,
    item: SettingsItem,
    opts: { dryRun: boolean },
  ): Promise<{ outcome: WriteOutcome; warnings: string[] }> {
    const { warnings } = this.check(item);
    const next: SettingsState = { data: {}, sensitiveKeys: [] };
    for (const [k, v] of Object.entries(item.data)) {
      if (isSensitiveArgoKey(item.object, k)) next.sensitiveKeys.push(k);
      else next.data[k] = v;
    }
    next.sensitiveKeys.sort();
    const actor = actorOf(ctx.principal);
    const result = await runAggregate<SettingsState, SettingsChanged>(this.deps.db, {
      dryRun: opts.dryRun,
      streamId: `settings/${item.object}`,
      meta: { actor, correlationId: ctx.correlationId },
      initial: () => ({ data: {}, sensitiveKeys: [] }),
      evolve: (_s, e) => ({ data: e.data.data, sensitiveKeys: e.data.sensitiveKeys }),
      decide: (state, version) => {
        const changes = changesOf(state, next);
        if (changes.length === 0) return [];
        return [
          {
            type: SETTINGS_CHANGED,
            data: {
              object: item.object,
              version: version + 1,
              data: next.data,
              sensitiveKeys: next.sensitiveKeys,
              changedKeys: changes.map((c) => c.key),
            },
          },
        ];
      },
      project: async (trx, events, _state, _version, at) => {
        await this.project(trx, events, actor, at, warnings);
        if (events.length > 0) await storeSealedValues(trx, this.deps.keyring, item.object, item.data);
      },
    });
    if (!opts.dryRun && result.events.length > 0) await this.deps.onChanged?.();
    const outcome: WriteOutcome =
      result.events.length === 0
        ? 'unchanged'
        : result.events[0]!.data.version === 1
          ? 'created'
          : 'configured';
    return { outcome, warnings };
  }

  private async project(
    trx: Transaction<ApiDatabase>,
    events: readonly SettingsChanged[],
    actor: string,
    at: Date,
    warnings: string[],
  ): Promise<void> {
    for (const e of events) {
      const previous = await trx
        .withSchema('api')
        .selectFrom('settings')
        .select(['data', 'sensitive_keys'])
        .where('object', '=', e.data.object)
        .orderBy('version', 'desc')
        .limit(1)
        .executeTakeFirst();
      await trx
        .withSchema('api')
        .insertInto('settings')
        .values({
          object: e.data.object,
          version: e.data.version,
          data: JSON.stringify(e.data.data) as never,
          sensitive_keys: JSON.stringify(e.data.sensitiveKeys) as never,
          actor,
          applied_at: at,
        })
        .execute();
      const before = { data: previous?.data ?? {}, sensitiveKeys: previous?.sensitive_keys ?? [] };
      await appendAudit(trx, 'settings_changes', {
        object: e.data.object,
        version: e.data.version,
        actor,
        changes: changesOf(before, { data: e.data.data, sensitiveKeys: e.data.sensitiveKeys }),
        warnings,
      });
    }
  }

  /** The latest version of every applied object. */
  async applied(): Promise<AppliedObject[]> {
    const rows = await this.deps.db
      .withSchema('api')
      .selectFrom('settings as s')
      .selectAll()
      .where(({ eb, selectFrom }) =>
        eb(
          's.version',
          '=',
          selectFrom('settings as t')
            .select((x) => x.fn.max('t.version').as('v'))
            .whereRef('t.object', '=', 's.object'),
        ),
      )
      .orderBy('s.object')
      .execute();
    return rows.map((r) => ({
      object: r.object as ArgoConfigObject,
      version: r.version,
      data: r.data,
      sensitiveKeys: r.sensitive_keys,
      actor: r.actor,
      appliedAt: r.applied_at,
    }));
  }
}
