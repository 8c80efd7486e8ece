import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A real PostgreSQL for the tests (Debian's postgresql package; .ci/run installs it): a
 * fresh cluster in a temporary directory on a free loopback port (initdb, pg_ctl), trust
 * authentication for the user `wsag`, stopped and removed by `stop`. As root, the server
 * runs as the package's `postgres` user (PostgreSQL refuses to run as root). WSAG_SKIP_POSTGRES=1
 * skips the tests that need it on a machine without PostgreSQL; CI never skips them.
 */
export interface TestPostgres {
  url: string;
  stop(): Promise<void>;
  /** Fault injection: `pg_ctl restart -m fast` (every session ended), or the server stopped until `resume`. */
  restart(): void;
  pause(): void;
  resume(): void;
}

export const skipPostgres = process.env.WSAG_SKIP_POSTGRES === '1';

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error(
      "no PostgreSQL server under /usr/lib/postgresql: install Debian's postgresql (.ci/run does), or set WSAG_SKIP_POSTGRES=1",
    );
  return path.join(root, versions[0] as string, 'bin');
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `durable`: fsync on (benchmarks); tests run with it off. `under`: the directory to make the cluster in. */
export async function startPostgres(options: { durable?: boolean; under?: string } = {}): Promise<TestPostgres> {
  const bin = binDir();
  const dir = fs.mkdtempSync(path.join(options.under ?? os.tmpdir(), 'wsag-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  const run = (tool: string, args: string[]) => {
    const [command, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]]
      : [path.join(bin, tool), args];
    const result = spawnSync(command, argv as string[], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${tool} failed (${result.status}): ${result.stderr || result.stdout}`);
  };
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'wsag', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  // fsync off in tests: they test our SQL, not PostgreSQL's durability.
  const fsync = options.durable ? 'on' : 'off';
  const control = (action: 'start' | 'restart') =>
    run('pg_ctl', [
      '-D',
      data,
      '-w',
      '-t',
      '60',
      ...(action === 'restart' ? ['-m', 'fast'] : []),
      '-l',
      path.join(dir, 'server.log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=${fsync} -c max_connections=200`,
      action,
    ]);
  control('start');
  return {
    url: `postgres://wsag@127.0.0.1:${port}/postgres`,
    restart: () => control('restart'),
    pause: () => run('pg_ctl', ['-D', data, '-w', '-m', 'fast', 'stop']),
    resume: () => control('start'),
    async stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
