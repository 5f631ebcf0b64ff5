// The `capstan` binary: errors go to stderr as one readable line (plus field paths), with a
// non-zero exit status; the grpc channels are closed by each command, so the process exits on its own.
import { buildProgram } from './program.js';
import { describeError } from './errors.js';

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    const { message, exitCode } = describeError(err);
    process.stderr.write(`error: ${message}\n`);
    process.exitCode = exitCode;
  });
