// Sync requests from other systems (`<ns>.ext.<source>.sync.request`). The source token is bound to
// the publishing system's bus user by the bus permissions, so it identifies the system; the setting
// `bus.ext-accounts` maps it to a Capstan account, as which the request goes through exactly the
// path of `capstan app sync`: the same RBAC check (recorded in audit.access_decisions with
// via = 'bus' and the actor `user:<account> via ext:<source>`), the same history, and only then the
// command to the sync service. The envelope's own `actor` is never believed. A source without an
// account, an unknown or disabled account, and a denied request are recorded as denials and dropped.
import { createHash } from 'node:crypto';
import { extSourceOf, extSyncRequest, type Bus, type RunningConsumer } from '@capstan/events';
import type { CapstanError } from '@capstan/service';
import {
  AlreadyExistsError,
  NotFoundError,
  PermissionDeniedError,
  ValidationError,
  type Logger,
} from '@capstan/service';
import type { Kysely } from 'kysely';
import { DEFAULT_CONTROL_NAMESPACE } from '@capstan/policy';
import type { ApiDatabase } from '../support/db.table.js';
import type { Authorizer } from '../rbac/authorizer.js';
import type { ApplicationsService } from '../applications/applications.service.js';
import { findAccount } from '../accounts/account.repository.js';
import type { Principal } from '../auth/principal.js';

export const EXT_SYNC_CONSUMER = 'api-ext-sync-requests';

/** `ci=ci-bot,deployer=release-bot`: external source -> Capstan account. */
export function parseExtAccounts(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [source, account, ...rest] = entry.split('=').map((s) => s.trim());
    if (!source || !account || rest.length > 0 || !/^[a-z][a-z0-9-]{0,62}$/.test(source))
      throw new ValidationError([
        {
          field: 'bus.ext-accounts',
          description: `expected <source>=<account>, got ${JSON.stringify(entry)}`,
        },
      ]);
    map.set(source, account);
  }
  return map;
}

/** Errors that answer the request for good (recorded already); anything else is retried. */
const FINAL = [PermissionDeniedError, NotFoundError, ValidationError, AlreadyExistsError];

export async function startExtSyncRequestConsumer(opts: {
  bus: Bus;
  db: Kysely<ApiDatabase>;
  authz: Authorizer;
  applications: ApplicationsService;
  accounts: ReadonlyMap<string, string>;
  logger: Logger;
}): Promise<RunningConsumer> {
  const principalOf = async (source: string): Promise<Principal | string> => {
    const name = opts.accounts.get(source);
    if (!name) return `no Capstan account is mapped to external source ${source} (bus.ext-accounts)`;
    const account = await findAccount(opts.db, name);
    if (!account || !account.enabled)
      return `account ${name} mapped to external source ${source} does not exist or is disabled`;
    return { name: account.name, groups: account.groups, kind: 'user', via: `ext:${source}` };
  };

  return opts.bus.consume({
    durable: EXT_SYNC_CONSUMER,
    events: [extSyncRequest],
    handle: async (event, ctx) => {
      const source = extSourceOf(ctx.subject) ?? '';
      const { data } = event;
      const namespace = data.application.namespace || DEFAULT_CONTROL_NAMESPACE;
      const principal = await principalOf(source);
      if (typeof principal === 'string') {
        await opts.authz.record(
          { name: `ext:${source}` },
          'applications',
          'sync',
          `*/${data.application.name}`,
          'bus',
          {
            allowed: false,
            reason: principal,
          },
        );
        opts.logger.warn({ source, application: data.application.name }, principal);
        return;
      }
      // One operation per external event, also when the event is delivered again.
      const operationId = `ext-${createHash('sha256').update(`${source}\0${event.id}`).digest('hex').slice(0, 32)}`;
      try {
        await opts.applications.sync(
          { principal, via: 'bus', correlationId: event.correlationid ?? event.id },
          namespace,
          data.application.name,
          {
            revision: data.revision ?? '',
            dryRun: data.dryRun,
            prune: data.prune,
            operationId,
            trigger: 'bus',
          },
        );
      } catch (err) {
        if (FINAL.some((E) => err instanceof E)) {
          opts.logger.warn(
            { source, application: data.application.name, reason: (err as CapstanError).message },
            'external sync request refused',
          );
          return;
        }
        throw err;
      }
    },
    onError: (err, info) => opts.logger.warn({ err, ...info }, 'external sync request not handled'),
  });
}
