import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { tlsFetch } from '../client/tls-fetch.js';
import { WsagClient, WsagFault } from '../client/wsag-client.js';
import { clientTls, clientTlsHelp } from './client-tls.js';
import type { Command } from './command.js';
import { agreementsCommand } from './commands/agreements.js';
import { accountCommand } from './commands/account.js';
import { usageCommand } from './commands/usage.js';
import { voCommand } from './commands/vo.js';
import { leaseCommand } from './commands/lease.js';
import { pricesCommand } from './commands/prices.js';
import { limitsCommand } from './commands/limits.js';
import { auditCommand } from './commands/audit.js';
import { certCommand } from './commands/cert.js';
import { countersignCommand } from './commands/countersign.js';
import { checkpointCommand } from './commands/checkpoint.js';
import { coallocateCommand } from './commands/coallocate.js';
import { correctCommand } from './commands/correct.js';
import { createCommand } from './commands/create.js';
import { negotiateCommand } from './commands/negotiate.js';
import { negotiationsCommand } from './commands/negotiations.js';
import { nodeCommand } from './commands/node.js';
import { pendingCommand } from './commands/pending.js';
import { serveCommand } from './commands/serve.js';
import { simCommand } from './commands/sim.js';
import { clusterCommand } from './commands/cluster.js';
import { simTraceCommand } from './commands/sim-trace.js';
import { stateCommand } from './commands/state.js';
import { templatesCommand } from './commands/templates.js';
import { terminateCommand } from './commands/terminate.js';
import { Args, type CommandContext, type Env } from './context.js';
import { CliError, exitCodes, UsageError } from './errors.js';
import { didYouMean } from '../domain/suggest.js';

export const commands: Command[] = [
  serveCommand,
  templatesCommand,
  createCommand,
  agreementsCommand,
  stateCommand,
  terminateCommand,
  negotiateCommand,
  negotiationsCommand,
  coallocateCommand,
  pendingCommand,
  checkpointCommand,
  simCommand,
  simTraceCommand,
  clusterCommand,
  certCommand,
  countersignCommand,
  auditCommand,
  accountCommand,
  usageCommand,
  voCommand,
  leaseCommand,
  pricesCommand,
  limitsCommand,
  nodeCommand,
  correctCommand,
];

/** What the CLI needs from the outside world; everything but out/err/env has a default. */
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Env;
  /** The fetch the client uses (default: the global fetch). */
  fetch?: typeof fetch;
  /** `wsag serve` stops when this resolves (default: SIGINT or SIGTERM). */
  untilStopped?: () => Promise<void>;
  /**
   * Asks the user one question and resolves with the answer line (undefined at end of
   * input). Given only when stdin and stdout are terminals: commands that can walk the
   * user through (wsag negotiate) do so only then.
   */
  prompt?: (question: string) => Promise<string | undefined>;
}

/** Runs one `wsag` command line (without the program name) and returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    usage().forEach(io.err);
    return exitCodes.usage;
  }
  if (name === 'help' || name === '--help' || name === '-h') {
    const topic = rest[0];
    if (topic === undefined) {
      usage().forEach(io.out);
      return exitCodes.ok;
    }
    const command = commands.find((c) => c.name === topic);
    if (!command) return unknownCommand(topic, io);
    commandHelp(command).forEach(io.out);
    return exitCodes.ok;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.out(`wsag ${version()}`);
    return exitCodes.ok;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) return unknownCommand(name, io);

  // Each client's connection failures are noted here, so they read as "cannot reach URL".
  const reached: { url?: string; failure?: unknown } = {};
  const guarded =
    (baseFetch: typeof fetch): typeof fetch =>
    async (input, init) => {
      try {
        return await baseFetch(input, init);
      } catch (error) {
        reached.failure ??= error;
        throw error;
      }
    };
  const guardedFetch = guarded(io.fetch ?? fetch);
  const ctx: CommandContext = {
    out: io.out,
    err: io.err,
    env: io.env,
    client: (url) => {
      reached.url = url;
      return new WsagClient(
        url,
        url.startsWith('https:') && !io.fetch ? guarded(tlsFetch(clientTls(io.env))) : guardedFetch,
      );
    },
    untilStopped: io.untilStopped ?? untilSignal,
    ...(io.prompt ? { prompt: io.prompt } : {}),
  };

  try {
    const args = parse(command, rest);
    if (args.flag('help')) {
      commandHelp(command).forEach(io.out);
      return exitCodes.ok;
    }
    return (await command.run(args, ctx)) ?? exitCodes.ok;
  } catch (error) {
    return report(error, command, reached, io);
  }
}

function parse(command: Command, argv: string[]): Args {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    // node:util reports unknown options and missing values as TypeError with an ERR_PARSE_ARGS_* code.
    if ((error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS'))
      throw new UsageError(parseArgsMessage(error as Error, command));
    throw error;
  }
  const args = new Args(parsed.values, parsed.positionals);
  if (args.flag('help')) return args;
  const missing = command.positionals[parsed.positionals.length];
  if (missing) throw new UsageError(`missing ${missing}`);
  const extra = parsed.positionals[command.positionals.length + (command.optionalPositionals?.length ?? 0)];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  return args;
}

/**
 * node:util's messages carry advice for the programmer ("To specify a positional argument
 * ..."): keep the first sentence, say what a value starting with a dash needs, and suggest
 * the option that was probably meant.
 */
function parseArgsMessage(error: Error, command: Command): string {
  const first = (error.message.split('\n')[0] ?? error.message)
    .replace(/\. To specify a positional argument.*$/, '')
    .replace(/\.$/, '');
  const ambiguous =
    /^Option '(--[\w-]+)(?:, -\w)? <value>' argument is ambiguous/.exec(first) ??
    /^Option '(--[\w-]+)[^']*' argument is ambiguous/.exec(first);
  if (ambiguous) return `${ambiguous[1]} needs a value; a value that starts with "-" is written ${ambiguous[1]}=-VALUE`;
  const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec(first);
  if (unknown) {
    const known = [...Object.keys(command.options), 'help'];
    const option = unknown[1] as string;
    return `unknown option ${option}${didYouMean(option.replace(/^-+/, ''), known, (o) => `--${o}`)}`;
  }
  return first;
}

function report(error: unknown, command: Command, reached: { url?: string; failure?: unknown }, io: CliIo): number {
  const debug = io.env.WSAG_DEBUG === '1' || io.env.WSAG_DEBUG === 'true';
  let code: number = exitCodes.failed;
  if (error instanceof UsageError) {
    io.err(`error: ${error.message}`);
    io.err(`usage: ${command.synopsis}`);
    io.err(`(more: wsag help ${command.name})`);
    code = exitCodes.usage;
  } else if (reached.failure !== undefined && !(error instanceof WsagFault) && !(error instanceof CliError)) {
    io.err(
      `error: cannot reach ${reached.url ?? 'the server'}: is the server running? (start it with: npm start; ` +
        `or give its address with --url or WSAG_URL)`,
    );
    if (debug) io.err(`cause: ${describeCause(reached.failure)}`);
  } else {
    // WsagFault's message is "<Code>: <description>", in plain words; the validator's own follow under WSAG_DEBUG.
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    if (debug && error instanceof WsagFault && error.technicalDetail)
      io.err(`the server's technical detail: ${error.technicalDetail}`);
  }
  if (debug && error instanceof Error && !(error instanceof UsageError) && !(error instanceof CliError))
    io.err(error.stack ?? String(error));
  return code;
}

function describeCause(failure: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = failure, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    parts.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  }
  return parts.join(' <- ');
}

function unknownCommand(name: string, io: CliIo): number {
  io.err(`error: unknown command "${name}"${didYouMean(name, [...commands.map((c) => c.name), 'help'])}`);
  io.err('(the commands: wsag help)');
  return exitCodes.usage;
}

export function usage(): string[] {
  const width = Math.max(...commands.map((c) => c.name.length), 'help'.length) + 2;
  return [
    'wsag: command-line client for wsag-server (WS-Agreement over SOAP)',
    '',
    'usage: wsag <command> [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)} ${c.summary}`),
    `  ${'help'.padEnd(width)} this text, or one command's: wsag help create`,
    '',
    'common options:',
    '  --url URL    server base URL (default: $WSAG_URL, else http://127.0.0.1:8080)',
    '  --json       print one JSON document on stdout instead of text',
    "  -h, --help   the command's options",
    '',
    'environment: WSAG_URL (server base URL), WSAG_DEBUG=1 (stack traces on errors)',
    ...clientTlsHelp,
    'exit codes: 0 done, 1 failed (fault, unreachable server, ...), 2 bad command line',
  ];
}

export function commandHelp(command: Command): string[] {
  const lines = [
    `usage: ${command.synopsis}`,
    '',
    ...command.description,
    '',
    'options:',
    ...command.optionHelp,
    '  -h, --help         this text',
  ];
  if (command.examples?.length) lines.push('', examplesHeading(command.examples), ...command.examples);
  return lines;
}

/** Names the placeholders the examples use, so none is mistaken for a literal value. */
const placeholders: Record<string, string> = {
  '<ID>': "an agreement's id",
  '<NID>': "a negotiation's id",
  '<OFFER>': "an offer's id",
};

function examplesHeading(examples: string[]): string {
  const used = Object.entries(placeholders).filter(([name]) => examples.some((e) => e.includes(name)));
  return used.length ? `examples (${used.map(([name, meaning]) => `${name}: ${meaning}`).join(', ')}):` : 'examples:';
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

function version(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
