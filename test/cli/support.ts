import net from 'node:net';
import { runCli, type CliIo } from '../../src/cli/run.js';

export interface CliResult {
  code: number;
  out: string[];
  err: string[];
  /** stdout as one text (lines joined). */
  stdout: string;
  stderr: string;
}

/** Runs `wsag ...argv` in-process against `url` (given as WSAG_URL), capturing its output. */
export async function wsag(
  argv: string[],
  options: { url?: string; env?: Record<string, string>; io?: Partial<CliIo> } = {},
): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const env: Record<string, string> = { ...(options.url ? { WSAG_URL: options.url } : {}), ...options.env };
  const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env, ...options.io });
  return { code, out, err, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** A loopback URL where nothing listens: a port that was free a moment ago. */
export async function deadUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

export const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
