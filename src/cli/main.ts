/**
 * The `wsag` command (bin/wsag.js runs this file through tsx). All behaviour lives in
 * run.ts, which tests call in-process; this file only binds it to the process.
 */
import readline from 'node:readline';
import { runCli } from './run.js';

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0); // `wsag agreements | head` closed the pipe
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  ...(process.stdin.isTTY && process.stdout.isTTY ? { prompt: ask } : {}),
});

/** One question on the terminal; Ctrl-D (end of input) answers undefined. */
function ask(question: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
    let answered = false;
    rl.on('close', () => {
      if (!answered) resolve(undefined);
    });
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer);
    });
  });
}
