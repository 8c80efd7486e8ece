/**
 * The `wsag` command (bin/wsag.js runs this file through tsx). All behaviour lives in
 * run.ts, which tests call in-process; this file only binds it to the process.
 */
import { runCli } from './run.js';

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0); // `wsag agreements | head` closed the pipe
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
});
