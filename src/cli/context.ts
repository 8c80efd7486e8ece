import type { WsagClient } from '../client/wsag-client.js';

/** Environment variables the CLI reads (a plain record, so tests pass their own). */
export type Env = Record<string, string | undefined>;

/**
 * What a command may touch. Output goes through `out`/`err` one line at a time, the
 * server is reached only through `client`, so tests run commands in-process.
 */
export interface CommandContext {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Env;
  /** A client for the server at `baseUrl`; connection failures are reported as "cannot reach". */
  client: (baseUrl: string) => WsagClient;
  /** `wsag serve` runs until this resolves (SIGINT or SIGTERM by default). */
  untilStopped: () => Promise<void>;
  /** Asks the user (undefined answer: end of input); absent unless stdin and stdout are terminals. */
  prompt?: (question: string) => Promise<string | undefined>;
}

/** Parsed command line of one command: option values by long name, then positionals. */
export class Args {
  constructor(
    private readonly values: Record<string, string | boolean | (string | boolean)[] | undefined>,
    readonly positionals: string[],
  ) {}

  string(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === 'string' ? value : undefined;
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  list(name: string): string[] {
    const value = this.values[name];
    if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
    return typeof value === 'string' ? [value] : [];
  }
}
