// The `capstan` binary: errors go to stderr as one readable line (plus field paths), with a
// non-zero exit status; the grpc channels are closed by each command, so the process exits on its own.
import { buildProgram } from './program.js';
import { describeError } from './errors.js';

// grpc-js names the server for TLS by the address it was given, so `capstan login 127.0.0.1:8083`
// makes Node warn on every command that an IP address is not a valid TLS server name (DEP0123);
// the certificate is still verified against the address (its IP SAN). Other warnings still print.
process.removeAllListeners('warning');
process.on('warning', (w: Error & { code?: string }) => {
  if (w.code !== 'DEP0123') process.stderr.write(`${w.name}: ${w.message}\n`);
});

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    const { message, exitCode } = describeError(err);
    process.stderr.write(`error: ${message}\n`);
    process.exitCode = exitCode;
  });
