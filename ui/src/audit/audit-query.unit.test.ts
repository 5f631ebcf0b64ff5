import { describe, expect, it } from 'vitest';
import { auditQueryFrom, auditQueryToSearch, rowsToCsv } from './audit-query';

describe('audit explorer query and CSV', () => {
  it('round-trips the table and filters through the URL, defaulting to sync decisions', () => {
    const q = auditQueryFrom('table=resource_results&application=guestbook&outcome=error');
    expect(q).toMatchObject({
      table: 'resource_results',
      application: 'guestbook',
      outcome: 'error',
      user: '',
    });
    expect(auditQueryToSearch(q)).toBe('table=resource_results&application=guestbook&outcome=error');
    expect(auditQueryFrom('table=nope').table).toBe('sync_decisions');
  });

  it('writes CSV with every field, quoting commas, quotes, JSON and formula-like text', () => {
    const csv = rowsToCsv([
      { id: 2, time: 't2', fields: { reason: 'a, "b"', rules: [{ matched: true }] }, hash: 'h2' },
      { id: 1, time: 't1', fields: { actor: '=cmd()' }, hash: 'h1' },
    ]);
    expect(csv.split('\r\n')).toEqual([
      'id,time,actor,reason,rules,hash',
      '2,t2,,"a, ""b""","[{""matched"":true}]",h2',
      `1,t1,"'=cmd()",,,h1`,
      '',
    ]);
  });
});
