import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands, runCli } from '../../src/cli/run.js';
import { deadUrl } from '../cli/support.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { projectRoot } from '../support/server.js';

/**
 * Every example a user is shown runs as shown: each command's `--help` examples and every
 * command of the README's shell blocks, run by a shell in a directory of their own with the
 * `wsag` command on the PATH (the README's `npx wsag`), against servers started as the README
 * starts them (the compiled server, `npm start`'s flags, ./templates and ./data where the
 * shell is). A failing example fails the test with its output.
 *
 * What is put in for the reader's placeholders, and nothing else:
 * - `<ID>`, `<NID>`, `<OFFER>`: the agreement, negotiation or offer an earlier command of the
 *   same block printed; where none did, one made for the example (a pending agreement for the
 *   provider's decisions, a reservation for the lease, an agreement that ended with a
 *   violation for its correction, usage record and audit trail);
 * - the documented addresses (`http://127.0.0.1:8080`, port 8443, the sites `a`, `b`,
 *   `site-a`, `site-b` of co-allocation) become the test servers' own, and `/tmp/` the
 *   block's directory;
 * - dates become dates a few hours ahead, apart as the example has them.
 * The `--help` examples run against a server whose local user is an operator
 * (`WSAG_ADMINS=anonymous`, as docs/configuration.md says) and which signs (after `wsag cert demo`).
 */
const wsagBin = path.join(projectRoot, 'bin', 'wsag.js');
const commandSeconds = 120;
const uuidText = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

interface Ran {
  code: number;
  output: string;
}
interface Found {
  ID?: string;
  NID?: string;
  OFFER?: string;
}
interface Shell {
  dir: string;
  env: Record<string, string>;
}

const servers: ServerProcess[] = [];
const dirs: string[] = [];
let shimDir = '';
let operatorShell: Shell;
let tour: ServerProcess;
let operated: ServerProcess;
let endedWithViolation: Promise<string>;

function workDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-examples-'));
  dirs.push(dir);
  // What a clone has where `npm start` and `wsag sim` run.
  for (const name of ['templates', 'workloads', 'examples'])
    fs.symlinkSync(path.join(projectRoot, name), path.join(dir, name));
  return dir;
}

/** Runs one command line as a shell would; `answers` reply to prompts on a terminal. */
function shell(line: string, at: Shell, answers?: Array<[RegExp, string]>): Promise<Ran> {
  const env = {
    ...process.env,
    ...at.env,
    PATH: `${shimDir}${path.delimiter}${process.env.PATH ?? ''}`,
    LOG_LEVEL: 'silent',
  };
  const args = answers ? ['-qec', line, '/dev/null'] : ['-c', line];
  const child = spawn(answers ? 'script' : 'bash', args, { cwd: at.dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const pending = [...(answers ?? [])];
  let answeredUpTo = 0;
  const onData = (chunk: Buffer): void => {
    output += chunk.toString();
    const next = pending[0];
    if (next?.[0].test(output.slice(answeredUpTo))) {
      pending.shift();
      answeredUpTo = output.length;
      child.stdin.write(`${next[1]}\n`);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  if (!answers) child.stdin.end();
  // A command that waits for what never comes fails with what it printed, not the test's timeout.
  const timer = setTimeout(() => {
    output += `\n(no answer in ${commandSeconds} s: stopped)`;
    child.kill('SIGKILL');
  }, commandSeconds * 1000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output });
    }),
  );
}

async function ranOk(line: string, at: Shell, answers?: Array<[RegExp, string]>): Promise<string> {
  const { code, output } = await shell(line, at, answers);
  expect(code, `${line}\n${output}`).toBe(0);
  return output;
}

function remember(found: Found, output: string): void {
  const offer = new RegExp(`(${uuidText}-\\d+)`).exec(output);
  if (offer) found.OFFER = offer[1];
  const negotiation = new RegExp(`negotiation (${uuidText})\\b`).exec(output);
  if (negotiation) found.NID = negotiation[1];
  const agreement = new RegExp(`agreement (${uuidText})(?!-)`).exec(output);
  if (agreement) found.ID = agreement[1];
}

const hourMs = 3_600_000;

/** A time as the CLI takes it: whole seconds, UTC. */
const isoAt = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

/** The hour `hours` ahead. */
const isoIn = (hours: number) => isoAt(Math.ceil(Date.now() / hourMs) * hourMs + hours * hourMs);

/** Dates a few hours ahead, as far apart as the example's. */
function futureDates(line: string): string {
  const dates = line.match(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g) ?? [];
  if (!dates.length) return line;
  const anchor = Date.parse(isoIn(4));
  const first = Date.parse(dates[0] as string);
  return line.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, (d) => isoAt(anchor + Date.parse(d) - first));
}

/** The command line without its comment, `npx wsag` as `wsag`. */
function commandOf(line: string): string {
  return line
    .replace(/\s+#\s.*$/, '')
    .replace(/^npx wsag\b/, 'wsag')
    .trim();
}

/** `examples:` of `wsag NAME --help`, continuation lines joined, comment-only lines dropped. */
async function helpExamples(name: string): Promise<string[]> {
  const out: string[] = [];
  await runCli([name, '--help'], { out: (l) => out.push(l), err: () => {}, env: {} });
  const start = out.findIndex((l) => l.startsWith('examples'));
  if (start < 0) return [];
  const joined: string[] = [];
  let carried = '';
  for (const raw of out.slice(start + 1)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (line.endsWith('\\')) carried += `${line.slice(0, -1)} `;
    else {
      joined.push(carried + line);
      carried = '';
    }
  }
  return joined;
}

/** The README's shell blocks, line by line. */
function readmeBlocks(): string[][] {
  const text = fs.readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    (m[1] as string)
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== ''),
  );
}

function placedIn(line: string, found: Found): string {
  return line.replace(/<(ID|NID|OFFER)>/g, (_, name: keyof Found) => {
    const value = found[name];
    if (!value) throw new Error(`no ${name} printed before: ${line}`);
    return value;
  });
}

function atAddresses(line: string, dir: string, tlsPort: number): string {
  // Before the README's `npm start` there is no tour server; a line naming it waits for it.
  const other = tour?.url ?? operated.url;
  return line
    .replaceAll('http://127.0.0.1:8080', other)
    .replaceAll('http://a:8080', other)
    .replaceAll('http://b:8080', operated.url)
    .replaceAll('http://site-a:8080', operated.url)
    .replaceAll('http://site-b:8080', other)
    .replaceAll('localhost:8443', `localhost:${tlsPort}`)
    .replaceAll('WSAG_TLS_PORT=8443', `WSAG_TLS_PORT=${tlsPort}`)
    .replaceAll('/tmp/', `${dir}/`);
}

async function made(line: string): Promise<string> {
  const output = await ranOk(`${line} --json`, operatorShell);
  return (JSON.parse(output) as { agreementId: string }).agreementId;
}

/** An advance reservation whose node fails as its window opens: it ends Complete, Violated. */
async function reservationEndingViolated(): Promise<string> {
  const start = Math.ceil((Date.now() + 60_000) / 1000) * 1000;
  const id = await made(
    `wsag create --template advance-reservation --set NodeCount=2 --set StartTime=${isoAt(start)} --set EndTime=${isoAt(start + 20_000)}`,
  );
  const plan = (await (await fetch(`${operated.url}/api/plan`)).json()) as {
    bookings: Array<{ id: string; nodeIds: string[] }>;
  };
  const node = plan.bookings.find((b) => b.id === id)?.nodeIds[0] as string;
  await new Promise((resolve) => setTimeout(resolve, start + 1_000 - Date.now()));
  await ranOk(`wsag node fail ${node}`, operatorShell);
  for (;;) {
    const state = await ranOk(`wsag state ${id}`, operatorShell);
    if (/: Complete/.test(state)) {
      expect(state).toMatch(/NodesThroughWindow\s+Violated/);
      await ranOk(`wsag node repair ${node}`, operatorShell);
      return id;
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

/** What a `--help` example's placeholders stand for when no earlier example printed one. */
async function madeFor(command: string, line: string, found: Found): Promise<void> {
  if (command === 'pending' && /\b(accept|reject)\b/.test(line))
    found.ID = await made('wsag pending create --template deadline-job --set NodeCount=1');
  if (found.ID === undefined && /<ID>/.test(line)) {
    if (['correct', 'usage', 'audit'].includes(command)) found.ID = await endedWithViolation;
    else if (command === 'lease')
      found.ID = await made(
        `wsag create --template advance-reservation --set NodeCount=4 --set StartTime=${isoIn(2)} --set EndTime=${isoIn(3)}`,
      );
    else found.ID = await made('wsag create --template deadline-job --set NodeCount=1');
  }
  if (found.NID === undefined && /<NID>/.test(line)) {
    const output = await ranOk('wsag negotiate --template advance-reservation --advisory', operatorShell);
    remember(found, output);
  }
}

const interactive: Array<[RegExp, string]> = [
  [/template \[1-\d+\]: /, 'deadline-job'],
  [/solicit which slot\? .*: /, '1'],
  [/accept it\? \[y\/N\]: /, 'y'],
];

beforeAll(async () => {
  shimDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-examples-bin-'));
  dirs.push(shimDir);
  fs.writeFileSync(path.join(shimDir, 'wsag'), `#!/bin/sh\nexec "${process.execPath}" "${wsagBin}" "$@"\n`, {
    mode: 0o755,
  });
  operatorShell = { dir: workDir(), env: {} };
  // The operator's server signs: its data directory has the demo PKI before it starts.
  await ranOk('wsag cert demo', operatorShell);
  operated = await startServerProcess(
    path.join(operatorShell.dir, 'data'),
    { WSAG_ADMINS: 'anonymous' },
    { compiled: true, cwd: operatorShell.dir },
  );
  servers.push(operated);
  operatorShell.env.WSAG_URL = operated.url;
  endedWithViolation = reservationEndingViolated();
  endedWithViolation.catch(() => {});
}, 60_000);

afterAll(() => {
  for (const server of servers) server.child.kill('SIGTERM');
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe("the README's shell blocks", () => {
  it('run as written, in order, against servers started as they say', { timeout: 240_000 }, async () => {
    const blocks = readmeBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    let ran = 0;
    for (const block of blocks) {
      const at: Shell = { dir: workDir(), env: {} };
      const tlsPort = Number(new URL(await deadUrl()).port);
      const found: Found = {};
      if (tour) at.env.WSAG_URL = tour.url;
      for (const written of block) {
        const line = futureDates(atAddresses(commandOf(written), at.dir, tlsPort));
        if (/^npm (install|test)\b/.test(line)) continue; // the test itself runs after both
        const start = /^((?:\w+=\S+\s+)*)npm start$/.exec(line);
        if (start) {
          const env = Object.fromEntries(
            (start[1] as string)
              .trim()
              .split(/\s+/)
              .filter(Boolean)
              .map((a) => a.split('=') as [string, string]),
          );
          const server = await startServerProcess(path.join(at.dir, 'data'), env, { compiled: true, cwd: at.dir });
          servers.push(server);
          tour ??= server;
          at.env.WSAG_URL = server.url;
          continue;
        }
        if (line.startsWith('export ')) {
          for (const pair of line.slice('export '.length).trim().split(/\s+/)) {
            const [name, value] = pair.split('=') as [string, string];
            at.env[name] = value;
          }
          continue;
        }
        const output = await ranOk(placedIn(line, found), at);
        remember(found, output);
        ran += 1;
      }
    }
    expect(ran).toBeGreaterThanOrEqual(20);
  });
});

describe("every command's --help examples", () => {
  it('run as written against a server configured as documented', { timeout: 480_000 }, async () => {
    let ran = 0;
    // Those that read an agreement that has ended come last, while it runs to its end.
    const last = ['correct', 'usage', 'audit'];
    const ordered = [
      ...commands.filter((c) => !last.includes(c.name)),
      ...commands.filter((c) => last.includes(c.name)),
    ];
    for (const command of ordered) {
      const found: Found = {};
      for (const example of await helpExamples(command.name)) {
        const line = futureDates(atAddresses(commandOf(example), operatorShell.dir, 0));
        await madeFor(command.name, line, found);
        const answers = /# interactive, on a terminal/.test(example) ? interactive : undefined;
        const output = await ranOk(placedIn(line, found), operatorShell, answers);
        remember(found, output);
        ran += 1;
      }
    }
    expect(ran).toBeGreaterThanOrEqual(40);
  });
});
