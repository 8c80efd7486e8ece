import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient, type WsagFault } from '../../src/client/wsag-client.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { MemoryNegotiationRepository } from '../../src/store/memory-negotiation-repository.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { projectRoot } from '../support/server.js';

/**
 * In Debian's Chromium: an operator's browser (the local user is an
 * operator here, as a certificate-holding operator's browser would be) is made to act by a
 * stored document and by a page on another site. Neither may change anything: a document
 * is served sandboxed (its script never runs as a page of this origin) and a markup-bearing
 * offer is refused at the door; a form or no-cors request from another origin is refused by
 * name before it is read.
 */
const chromiumPath = process.env.WSAG_CHROMIUM ?? '/usr/bin/chromium';
const skip = process.env.WSAG_SKIP_BROWSER === '1';
const xhtml = 'http://www.w3.org/1999/xhtml';

let server: RunningServer;
let client: WsagClient;
let browser: Browser;
let repository: MemoryAgreementRepository;
let attacker: http.Server;
let attackerUrl = '';
let attackerPage = '';

beforeAll(async () => {
  if (skip) return;
  if (!fs.existsSync(chromiumPath))
    throw new Error(
      `no Chromium at ${chromiumPath}: install Debian's chromium (.ci/run does), or set WSAG_SKIP_BROWSER=1`,
    );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-attacks-'));
  repository = new MemoryAgreementRepository();
  const config = loadConfig(
    {},
    {
      port: 0,
      dataDir,
      templatesDir: path.join(projectRoot, 'templates'),
      logLevel: 'silent',
      admins: ['anonymous'],
      clusterNodes: 6,
      executor: 'none',
    },
  );
  server = await startServer(config, {
    repository,
    negotiationRepository: new MemoryNegotiationRepository(),
    logger: pino({ level: 'silent' }),
  });
  client = new WsagClient(server.url);
  attacker = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(attackerPage));
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  attacker?.close();
});

const failed = async () => (await client.nodes()).filter((n) => n.failed).map((n) => n.id);
const reservation = async () =>
  offerFromTemplate((await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string, [
    { location: 'NodeCount', value: '1' },
  ]);
/** A script that, run as a page of the server, fails a node with the browser's credentials. */
const failing = (node: string) =>
  `fetch('/api/nodes/${node}/fail', { method: 'POST', headers: { 'x-requested-with': 'x' } }).then(() => document.title = 'ran')`;

describe.skipIf(skip)('a browser made to act for someone else', () => {
  it('an offer carrying XHTML, SVG or a stylesheet instruction is refused by name, and nothing is stored', async () => {
    const offer = await reservation();
    const withContext = (extra: string) => offer.replace('</wsag:Context>', `${extra}</wsag:Context>`);
    for (const [extra, code, named] of [
      [`<h:script xmlns:h="${xhtml}">${failing('n005')}</h:script>`, 'InvalidTerms', 'the offer holds XHTML (script)'],
      ['<s:svg xmlns:s="http://www.w3.org/2000/svg" onload="alert(1)"/>', 'InvalidTerms', 'the offer holds SVG (svg)'],
      ['<?xml-stylesheet href="x.xsl"?>', 'MalformedMessage', 'processing instructions are not allowed'],
    ] as const) {
      const fault = await client.createAgreement(withContext(extra)).then(
        () => undefined,
        (e: unknown) => e as WsagFault,
      );
      expect(fault?.code, fault?.description).toBe(code);
      expect(fault?.description).toContain(named);
    }
    expect(await client.agreements()).toEqual([]);
  });

  it('a stored document with a script is served as sandboxed data: opened by the operator, its script never runs', async () => {
    // A document stored before offers were checked for markup.
    const { agreementId } = await client.createAgreement(await reservation());
    const stored = (await repository.get(agreementId))!;
    const scripted = stored.document.replace(
      '</wsag:Context>',
      `<h:script xmlns:h="${xhtml}">${failing('n005')}</h:script></wsag:Context>`,
    );
    await repository.update({ ...stored, document: scripted }, []);
    const page = await browser.newPage();
    const answer = await page.goto(`${server.url}/api/agreements/${agreementId}/document`);
    expect(answer?.headers()['content-security-policy']).toBe("default-src 'none'; sandbox; frame-ancestors 'none'");
    expect(answer?.headers()['x-content-type-options']).toBe('nosniff');
    await page.waitForTimeout(500);
    expect(await failed()).toEqual([]);
    // The dashboard shows the document as text.
    await page.goto(`${server.url}/ui/#/agreements/${agreementId}`);
    await page.waitForSelector('body[data-ready="agreements"]');
    await page.click('details summary');
    await page.waitForFunction(() =>
      (document.querySelector('[data-field="document"]')?.textContent ?? '').includes('h:script'),
    );
    await page.waitForTimeout(300);
    expect(await failed()).toEqual([]);
    expect(await page.evaluate(() => document.title)).not.toBe('ran');
    await page.close();
  });

  it('a page on another site posting forms and no-cors requests changes nothing, and each is refused by name', async () => {
    const soap = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${(await reservation()).replace(/^<\?xml[^>]*>/, '')}</s:Body></s:Envelope>`;
    const answers: Array<{ status: number; url: string }> = [];
    attackerPage = `<!doctype html><body>
      <iframe name="sink"></iframe>
      <form id="node" method="POST" action="${server.url}/api/nodes/n004/fail" enctype="text/plain" target="sink"><input name="a" value="b"></form>
      <form id="soap" method="POST" action="${server.url}/wsag/AgreementFactory" enctype="text/plain" target="sink"><input name="${soap.replace(/"/g, '&quot;')}" value=""></form>
      <script>
        document.getElementById('node').submit();
        setTimeout(() => document.getElementById('soap').submit(), 200);
        fetch('${server.url}/api/nodes/n003/fail', { method: 'POST', mode: 'no-cors', credentials: 'include' });
        fetch('${server.url}/api/accounts', { method: 'POST', mode: 'no-cors', body: '{"id":"evil","owner":"mallory","currency":"EUR"}' });
      </script></body>`;
    const page = await browser.newPage();
    page.on('response', (response) => {
      if (response.url().startsWith(server.url)) answers.push({ status: response.status(), url: response.url() });
    });
    await page.goto(attackerUrl);
    await page.waitForTimeout(1500);
    await page.close();
    expect(await failed()).toEqual([]);
    expect((await client.agreements()).length).toBe(1);
    const accounts = await client.request<{ accounts: Array<{ id: string }> }>('/api/accounts', 'accounts');
    expect(accounts.accounts.map((a) => a.id)).not.toContain('evil');
    // Each request that reached the server was refused (what a frame shows of it is the browser's own page):
    // 403 under /api, a SOAP 1.1 fault (HTTP 500, as that binding has it) on the SOAP port.
    expect(answers.length).toBeGreaterThanOrEqual(2);
    for (const a of answers) expect(a.status).toBe(a.url.includes('/wsag/') ? 500 : 403);
  });

  it('the dashboard itself still acts for its operator, and sends its policy', async () => {
    const page = await browser.newPage();
    const answer = await page.goto(`${server.url}/ui/#/nodes`);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(answer?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.waitForSelector('body[data-ready="nodes"]');
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.click('button[data-action="fail-n002"]');
    await page.waitForFunction(async () =>
      (await (await fetch('/api/nodes')).json()).nodes.some(
        (n: { id: string; failed: boolean }) => n.id === 'n002' && n.failed,
      ),
    );
    expect(await failed()).toEqual(['n002']);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe.skipIf(skip)('the refusals, as a client sees them', () => {
  const post = (route: string, headers: Record<string, string>, body?: string) =>
    fetch(`${server.url}${route}`, { method: 'POST', headers, ...(body !== undefined ? { body } : {}) });

  it("names what was refused: another site, a form's media type, or no media type at all", async () => {
    const cases: Array<[Record<string, string>, number, string, RegExp]> = [
      [
        { origin: 'http://evil.example', 'content-type': 'application/json' },
        403,
        'NotAuthorized',
        /a request from http:\/\/evil\.example may not change anything here: only pages of http:\/\/127\.0\.0\.1:\d+ may/,
      ],
      [
        { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' },
        403,
        'NotAuthorized',
        /another site \(Sec-Fetch-Site: cross-site\)/,
      ],
      [
        { 'content-type': 'text/plain' },
        415,
        'UnsupportedMediaType',
        /Content-Type text\/plain may not change anything here, as a form on another site could send it/,
      ],
      [{}, 415, 'UnsupportedMediaType', /a request without Content-Type may not change anything here/],
    ];
    for (const [headers, status, error, detail] of cases) {
      const answer = await post('/api/nodes/n006/fail', headers);
      const body = (await answer.json()) as { error: string; detail: string };
      expect([answer.status, body.error]).toEqual([status, error]);
      expect(body.detail).toMatch(detail);
    }
    // A SOAP port answers a fault of its own.
    const soap = await post('/wsag/AgreementFactory', { 'content-type': 'text/plain' }, '<x/>');
    expect(soap.status).toBe(415);
    expect(await soap.text()).toContain('UnsupportedMediaType');
    // The same page's own request, and a client's, pass.
    expect((await post('/api/nodes/n006/fail', { origin: server.url, 'x-requested-with': 'x' })).status).toBe(200);
    expect((await post('/api/nodes/n006/repair', { 'content-type': 'application/json' })).status).toBe(200);
  });
});
