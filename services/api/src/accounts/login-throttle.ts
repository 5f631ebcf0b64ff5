// Login throttling as Argo CD's session manager does it (util/session/sessionmanager.go): failed
// logins are counted per key within a failure window that restarts at each failure; once a key has
// max-fail-count failures within the window, every login for it is refused, the right password
// included, until the window has passed since its last failure. A success forgets the account's
// failures. Beyond Argo CD, the source address is a key too (with its own, higher, threshold), so one
// client cannot spray passwords over many accounts; a success does not forget the address's failures.
// The counts live in PostgreSQL (api.login_failures) so every api replica sees the same ones, and the
// database's clock decides the window; at most max-cache-size keys are kept (oldest forgotten first).
import { sql, type Kysely } from 'kysely';
import type { ApiDatabase } from '../support/db.table.js';

export interface LoginThrottleSettings {
  /** Failures of one account within the window before its logins are refused (Argo CD: 5). */
  maxFailCount: number;
  /** Failures from one source address within the window before its logins are refused. */
  maxFailCountPerAddress: number;
  /** Seconds since the last failure during which failures count (Argo CD: 300). */
  failureWindowSeconds: number;
  /** Most keys remembered (Argo CD's ARGOCD_SESSION_MAX_CACHE_SIZE: 10000). */
  maxCacheSize: number;
}

export const DEFAULT_LOGIN_THROTTLE: LoginThrottleSettings = {
  maxFailCount: 5,
  maxFailCountPerAddress: 50,
  failureWindowSeconds: 300,
  maxCacheSize: 10_000,
};

export interface LoginKeys {
  account: string;
  /** Source address; undefined when the transport does not know it. */
  address: string | undefined;
}

export type Lockout = { key: 'account' | 'address'; failures: number };

const keysOf = (k: LoginKeys) => ({
  account: `account:${k.account}`,
  // An IPv4 client seen through an IPv6 socket (`::ffff:10.0.0.1`) is the same client.
  ...(k.address ? { address: `address:${k.address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '')}` } : {}),
});

export class LoginThrottle {
  private readonly db: Kysely<ApiDatabase>;

  constructor(
    db: Kysely<ApiDatabase>,
    private readonly settings: LoginThrottleSettings = DEFAULT_LOGIN_THROTTLE,
  ) {
    this.db = db.withSchema('api');
  }

  private get window() {
    return sql<Date>`now() - make_interval(secs => ${this.settings.failureWindowSeconds})`;
  }

  /** Whether the account or the address is locked out now, and which. */
  async lockout(k: LoginKeys): Promise<Lockout | undefined> {
    const keys = keysOf(k);
    const rows = await this.db
      .selectFrom('login_failures')
      .select(['key', 'fail_count'])
      .where('key', 'in', Object.values(keys))
      .where('last_failed', '>', this.window)
      .execute();
    for (const r of rows) {
      if (r.key === keys.account && r.fail_count >= this.settings.maxFailCount)
        return { key: 'account', failures: r.fail_count };
      if (r.key === keys.address && r.fail_count >= this.settings.maxFailCountPerAddress)
        return { key: 'address', failures: r.fail_count };
    }
    return undefined;
  }

  /** Counts one failure for the account and the address; an expired count starts again at 1. */
  async fail(k: LoginKeys): Promise<void> {
    const window = this.window;
    await this.db.transaction().execute(async (tx) => {
      for (const key of Object.values(keysOf(k))) {
        await tx
          .insertInto('login_failures')
          .values({ key, fail_count: 1, last_failed: sql<Date>`now()` })
          .onConflict((oc) =>
            oc.column('key').doUpdateSet({
              fail_count: sql<number>`case when api.login_failures.last_failed > ${window} then api.login_failures.fail_count + 1 else 1 end`,
              last_failed: sql<Date>`now()`,
            }),
          )
          .execute();
      }
      await tx.deleteFrom('login_failures').where('last_failed', '<=', window).execute();
      await tx
        .deleteFrom('login_failures')
        .where(
          'key',
          'in',
          tx
            .selectFrom('login_failures')
            .select('key')
            .orderBy('last_failed', 'desc')
            .offset(this.settings.maxCacheSize),
        )
        .execute();
    });
  }

  /** A successful login forgets the account's failures (not the address's). */
  async succeed(k: LoginKeys): Promise<void> {
    await this.db.deleteFrom('login_failures').where('key', '=', keysOf(k).account).execute();
  }
}
