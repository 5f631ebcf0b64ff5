// capstan admin dlq: `admin dlq list` shows what the services' bus consumers gave up
// on (each service's dead letters, with the reason); `admin dlq replay <service>:<id>` asks the
// owning service to hand one to its consumer again (after the fault is fixed) and waits for the
// outcome it records. Admins only (RBAC resource deadletters).
import { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { withConnection, type Connection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { outputOption, printList, type OutputFormat } from '../output/format.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function findDeadLetter(c: Connection, id: string): Promise<apiv1.DeadLetter | undefined> {
  const service = id.split(':')[0] ?? '';
  let pageToken = '';
  for (let page = 0; page < 20; page++) {
    const r = await c.call(c.deadLetters.list.bind(c.deadLetters), {
      service,
      consumer: '',
      limit: 1000,
      pageToken,
    });
    const hit = r.items.find((x) => x.id === id);
    if (hit || !r.nextPageToken) return hit;
    pageToken = r.nextPageToken;
  }
  return undefined;
}

export function adminDlqCommand(): Command {
  const dlq = new Command('dlq').description("dead letters: messages the services' bus consumers gave up on");

  dlq
    .command('list')
    .description('dead letters, newest first')
    .option('--service <service>', 'api, sync, repo or appset', '')
    .option('--consumer <name>', 'one consumer, e.g. repo-git-push', '')
    .option('--limit <n>', 'rows per page', '100')
    .option('--page-token <token>', 'continue after a previous page', '')
    .addOption(outputOption())
    .action(
      (
        o: { service: string; consumer: string; limit: string; pageToken: string; output: OutputFormat },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          const r = await c.call(c.deadLetters.list.bind(c.deadLetters), {
            service: o.service,
            consumer: o.consumer,
            limit: Number(o.limit),
            pageToken: o.pageToken,
          });
          printList(
            o.output,
            r.items,
            [
              ['ID', (x) => x.id],
              ['RECORDED', (x) => x.recordedAt],
              ['CONSUMER', (x) => x.consumer],
              ['REASON', (x) => x.reason],
              ['REPLAY', (x) => (x.replayOutcome ? `${x.replayOutcome} (${x.replayedBy})` : '')],
            ],
            (x) => apiv1.DeadLetter.toJSON(x),
            (x) => x.id,
          );
          if (r.nextPageToken && (o.output === 'table' || o.output === 'wide'))
            process.stderr.write(`more rows: --page-token ${r.nextPageToken}\n`);
        }),
    );

  dlq
    .command('replay')
    .description(
      'hand one dead letter to its consumer again (in the service that owns it) and show the outcome',
    )
    .argument('<id>', '<service>:<n>, as `capstan admin dlq list` shows it')
    .option('--timeout <seconds>', 'how long to wait for the outcome', '30')
    .action((id: string, o: { timeout: string }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const before = await findDeadLetter(c, id);
        if (!before) throw new CliError(`no dead letter ${id}`);
        await c.call(c.deadLetters.replay.bind(c.deadLetters), { id });
        const deadline = Date.now() + Number(o.timeout) * 1000;
        while (Date.now() < deadline) {
          await sleep(500);
          const now = await findDeadLetter(c, id);
          if (now && now.replays > before.replays) {
            process.stdout.write(`${id}: ${now.replayOutcome}\n`);
            if (now.replayOutcome !== 'handled') throw new CliError(`replay of ${id} failed`);
            return;
          }
        }
        throw new CliError(
          `replay of ${id} requested; no outcome recorded within ${o.timeout}s (is the ${before.service} service running?)`,
        );
      }),
    );
  return dlq;
}
