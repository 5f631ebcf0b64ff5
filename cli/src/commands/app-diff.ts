// capstan app diff: argocd app diff. The api's ManagedResources (git's objects against the live
// ones, read by the sync service as the Application's ServiceAccount, Secrets masked) rendered per
// resource as "===== group/Kind namespace/name ======" and a unified diff of live (-) to git (+).
// Exit status as argocd's: 1 when there is a difference (0 with --exit-code=false), 0 when none,
// 2 on error.
import type { Command } from 'commander';
import { renderDiff } from '@capstan/diff/render';
import type { apiv1 } from '@capstan/proto';
import { withConnection } from '../client/connection.js';
import { CliError, describeError } from '../errors.js';

type Obj = Record<string, unknown>;

const parse = (text: string): Obj | undefined => (text ? (JSON.parse(text) as Obj) : undefined);

/** What argocd shows: live against predicted live when both exist, else git's object or live alone. */
export function renderResourceDiffs(
  items: readonly apiv1.ResourceDiff[],
  color: boolean,
): { text: string; found: boolean; errors: string[] } {
  const parts: string[] = [];
  const errors: string[] = [];
  for (const item of items) {
    if (item.error) {
      errors.push(`${item.group}/${item.kind} ${item.namespace}/${item.name}: ${item.error}`);
      continue;
    }
    if (item.hook || !item.modified) continue;
    const live = parse(item.normalizedLiveState) ?? parse(item.liveState);
    const target = parse(item.predictedLiveState) ?? parse(item.targetState);
    const rendered = renderDiff(target, live, { color });
    if (rendered) parts.push(`\n${rendered}`);
  }
  return { text: parts.join(''), found: parts.length > 0, errors };
}

export function addDiffCommand(app: Command): void {
  app
    .command('diff')
    .description(
      "the difference between git and the live objects (argocd app diff), read as the Application's ServiceAccount",
    )
    .argument('<name>')
    .option('-N, --app-namespace <ns>', '', '')
    .option('--project <project>', 'the Application must be in this project', '')
    .option('--exit-code <bool>', 'exit with 1 when there is a difference', 'true')
    .option('--no-color', 'no ANSI colours')
    .action(
      (
        name: string,
        o: { appNamespace: string; project: string; exitCode: string; color: boolean },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          let res: apiv1.ManagedResourcesResponse;
          try {
            res = await c.call(c.applications.managedResources.bind(c.applications), {
              applicationName: name,
              appNamespace: o.appNamespace,
              project: o.project,
              namespace: '',
              name: '',
              version: '',
              group: '',
              kind: '',
            });
          } catch (err) {
            throw new CliError(describeError(err).message, 2);
          }
          const { text, found, errors } = renderResourceDiffs(
            res.items,
            o.color && process.stdout.isTTY === true,
          );
          process.stdout.write(text);
          if (errors.length > 0) throw new CliError(errors.join('\n'), 2);
          if (found && o.exitCode !== 'false') process.exitCode = 1;
        }),
    );
}
