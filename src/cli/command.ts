import type { ParseArgsConfig } from 'node:util';
import type { Args, CommandContext, Env } from './context.js';
import { UsageError } from './errors.js';

export type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** One `wsag` subcommand: its options, its help text, and what it does. */
export interface Command {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The synopsis, e.g. `wsag state ID [--url URL] [--json]`. */
  synopsis: string;
  /** `wsag help NAME`: what the command does, its options (one or two lines each), examples. */
  description: string[];
  optionHelp: string[];
  examples?: string[];
  options: OptionsConfig;
  /** Names of the required positional arguments (e.g. `['ID']`). */
  positionals: string[];
  /** Names of positional arguments that may follow the required ones (e.g. `wsag pending accept ID`). */
  optionalPositionals?: string[];
  /** Returns the exit code (0 when nothing is returned). */
  run(args: Args, ctx: CommandContext): Promise<number | void>;
}

export const defaultUrl = 'http://127.0.0.1:8080';

export const urlOption = { url: { type: 'string' } } as const satisfies OptionsConfig;
export const jsonOption = { json: { type: 'boolean' } } as const satisfies OptionsConfig;

export const urlHelp = `  --url URL          server base URL (default: $WSAG_URL, else ${defaultUrl})`;
export const jsonHelp = '  --json             print one JSON document on stdout instead of text';

/**
 * `--url`, else WSAG_URL, else the default; must be an http(s) URL. An endpoint's address
 * (`.../wsag/AgreementFactory`, with or without `?wsdl`) or the dashboard's (`.../ui/`) names
 * the server it is on.
 */
export function serverUrl(args: Args, env: Env): string {
  const fromFlag = args.string('url');
  const fromEnv = env.WSAG_URL?.trim() || undefined;
  const url = fromFlag ?? fromEnv ?? defaultUrl;
  if (!/^https?:\/\/[^/\s]+/.test(url)) {
    throw new UsageError(
      `${fromFlag !== undefined ? '--url' : 'WSAG_URL'} must be an http(s) URL such as ${defaultUrl}, got "${url}"`,
    );
  }
  return url
    .replace(/[?#].*$/, '')
    .replace(/\/(wsag\/\w+|ui|api|metrics|healthz)(\/.*)?$/, '')
    .replace(/\/+$/, '');
}
