// capstan completion bash|zsh: completion of command names, derived from the command tree itself.
import { Command } from 'commander';
import { CliError } from '../errors.js';

function words(cmd: Command, prefix: string[] = []): string[] {
  return cmd.commands.flatMap((c) => [[...prefix, c.name()].join(' '), ...words(c, [...prefix, c.name()])]);
}

export function completionCommand(root: () => Command): Command {
  return new Command('completion')
    .description('print a shell completion script: source <(capstan completion bash)')
    .argument('<shell>', 'bash or zsh')
    .action((shell: string) => {
      const tree = words(root());
      const cases = new Map<string, Set<string>>();
      for (const w of tree) {
        const parts = w.split(' ');
        const parent = parts.slice(0, -1).join(' ');
        if (!cases.has(parent)) cases.set(parent, new Set());
        cases.get(parent)!.add(parts.at(-1)!);
      }
      const body = [...cases.entries()]
        .map(([parent, subs]) => `    "${parent}") opts="${[...subs].join(' ')}" ;;`)
        .join('\n');
      const script = `# capstan completion (${shell})
_capstan() {
  local cur path i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  path=""
  for ((i=1; i<COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in -*) ;; *) path="\${path:+$path }\${COMP_WORDS[i]}" ;; esac
  done
  local opts=""
  case "$path" in
${body}
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
`;
      if (shell === 'bash') process.stdout.write(`${script}complete -F _capstan capstan\n`);
      else if (shell === 'zsh')
        process.stdout.write(
          `autoload -U +X bashcompinit && bashcompinit\n${script}complete -F _capstan capstan\n`,
        );
      else throw new CliError(`unsupported shell ${shell} (bash or zsh)`);
    });
}
