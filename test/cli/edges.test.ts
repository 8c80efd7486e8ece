import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot, startTestServer, type TestServer } from '../support/server.js';
import { deadUrl, wsag } from './support.js';

/**
 * Natural mistakes get one plain line that says what to do, with the
 * command, option, template or Item that was probably meant; an endpoint's address works
 * as --url; a committing offer's id names its negotiation; a busy port names the setting.
 */
let server: TestServer;
let url = '';
beforeAll(async () => {
  server = await startTestServer({ config: { admins: ['anonymous'], clusterNodes: 16 } });
  url = server.url;
});
afterAll(async () => server?.close());

describe('forgiving edges of the CLI', () => {
  it('a mistyped command or option: one line with what was meant, exit 2', async () => {
    const command = await wsag(['agrements'], { url });
    expect([command.code, command.err]).toEqual([
      2,
      ['error: unknown command "agrements"; did you mean "agreements"?', '(the commands: wsag help)'],
    ]);
    const option = await wsag(['state', 'x', '--jsn'], { url });
    expect([option.code, option.err[0]]).toEqual([2, 'error: unknown option --jsn; did you mean --json?']);
    const dash = await wsag(['prices', '--hours', '-3'], { url });
    expect([dash.code, dash.err[0]]).toEqual([
      2,
      'error: --hours needs a value; a value that starts with "-" is written --hours=-VALUE',
    ]);
  });

  it('a mistyped template or Item names the one meant', async () => {
    const template = await wsag(['create', '--template', 'advance-reservaton'], { url });
    expect([template.code, template.err[0]]).toEqual([
      1,
      expect.stringMatching(
        /^error: no template named "advance-reservaton"; did you mean "advance-reservation"\?; the server offers: /,
      ),
    ]);
    const item = await wsag(['create', '--template', 'advance-reservation', '--set', 'NodeCont=2'], { url });
    expect([item.code, item.err[0]]).toEqual([
      1,
      expect.stringMatching(
        /^error: --set NodeCont: template advance-reservation has no Item "NodeCont" to set; did you mean "NodeCount"\?; its Items are: /,
      ),
    ]);
  });

  it("--url takes an endpoint's or the dashboard's address; an unreachable server names --url and WSAG_URL", async () => {
    for (const given of [`${url}/wsag/AgreementFactory?wsdl`, `${url}/wsag/AgreementFactory`, `${url}/ui/`]) {
      const result = await wsag(['templates', '--url', given]);
      expect([result.code, result.err], given).toEqual([0, []]);
    }
    const dead = await deadUrl();
    const unreachable = await wsag(['agreements', '--url', dead]);
    expect(unreachable.err[0]).toBe(
      `error: cannot reach ${dead}: is the server running? (start it with: npm start; or give its address with --url or WSAG_URL)`,
    );
  });

  it("--accept takes a committing offer's id alone: the id names its negotiation", async () => {
    const solicit = await wsag(
      ['negotiate', '--template', 'advance-reservation', '--set', 'NodeCount=2', '--solicit', '--json'],
      { url },
    );
    expect(solicit.err).toEqual([]);
    const { offer } = JSON.parse(solicit.stdout) as { offer: { offerId: string } };
    const accept = await wsag(['negotiate', '--accept', offer.offerId], { url });
    expect([accept.code, accept.err]).toEqual([0, []]);
    expect(accept.stdout).toMatch(/[0-9a-f-]{36}/);
  });

  it('wsag vo on a site without a usage policy says so', async () => {
    const result = await wsag(['vo'], { url });
    expect([result.code, result.out]).toEqual([
      0,
      [
        'this site has no VO usage policy: no VO, group or user is held to a share (set one with WSAG_VO_POLICY_FILE, docs/vo-policy.md)',
      ],
    ]);
  });

  it('a busy port is one line naming the setting, from wsag serve and from npm start', async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-busy-'));
    try {
      const serve = await wsag(['serve', '--port', String(port), '--data-dir', dataDir], {
        env: { LOG_LEVEL: 'silent' },
      });
      expect([serve.code, serve.err]).toEqual([
        1,
        [
          `error: cannot listen on 127.0.0.1:${port}: the port is already in use (another wsag-server?): stop what uses it, or set PORT (wsag serve --port) to a free port`,
        ],
      ]);
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: projectRoot,
        env: { ...process.env, PORT: String(port), WSAG_DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect([code, stderr.trim().split('\n')]).toEqual([
        1,
        [
          `wsag-server: cannot listen on 127.0.0.1:${port}: the port is already in use (another wsag-server?): stop what uses it, or set PORT (wsag serve --port) to a free port`,
        ],
      ]);
    } finally {
      busy.close();
    }
  }, 60_000);
});
