import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { negotiationOffer } from '../../src/xml/accepting-offer.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { projectRoot } from '../support/server.js';

/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core.
 * A server with SQLite (so agreements have their audit history) on 6 nodes, no run time;
 * the pages are loaded, clicked through and screenshotted into test-results/screenshots/.
 * WSAG_SKIP_BROWSER=1 skips this on a machine without Chromium; CI never skips it.
 */
const chromiumPath = process.env.WSAG_CHROMIUM ?? '/usr/bin/chromium';
const skip = process.env.WSAG_SKIP_BROWSER === '1';
const shots = path.join(projectRoot, 'test-results', 'screenshots');

let server: RunningServer;
let client: WsagClient;
let browser: Browser;
let page: Page;
let dataDir: string;

beforeAll(async () => {
  if (skip) return;
  if (!fs.existsSync(chromiumPath))
    throw new Error(
      `no Chromium at ${chromiumPath}: install Debian's chromium (.ci/run does), or set WSAG_SKIP_BROWSER=1`,
    );
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-ui-'));
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
  server = await startServer(config, { logger: pino({ level: 'silent' }) });
  client = new WsagClient(server.url);
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  fs.mkdirSync(shots, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const template = async (name: string) => (await client.templates()).find((t) => t.includes(`${name}-v1`)) as string;
async function open(hash: string, ready: string): Promise<void> {
  await page.evaluate(() => document.body.removeAttribute('data-ready')).catch(() => undefined);
  // Going to the page already shown changes no hash and loads nothing: nothing would render it again.
  const url = `${server.url}/ui/${hash}`;
  if (page.url() === url) await page.reload();
  else await page.goto(url);
  await page.waitForSelector(`body[data-ready="${ready}"]`);
}

describe.skipIf(skip)('the dashboard', () => {
  it('shows the schedule; failing a node from the Nodes view moves the booking in the Gantt', async () => {
    const job = (
      await client.createAgreement(
        offerFromTemplate(await template('deadline-job'), [{ location: 'NodeCount', value: '2' }]),
      )
    ).agreementId;
    await client.createAgreement(
      offerFromTemplate(await template('advance-reservation'), [{ location: 'NodeCount', value: '2' }]),
    );
    await client.createAgreement(
      offerFromTemplate(await template('best-effort-job'), [{ location: 'NodeCount', value: '1' }]),
    );
    const { negotiationId } = await client.initiateNegotiation();
    await client.negotiate(negotiationId, [
      negotiationOffer(
        offerFromTemplate(await template('advance-reservation'), [{ location: 'NodeCount', value: '1' }]),
        { counterOfferTo: 'advance-reservation-v1', state: 'Solicited' },
      ),
    ]);

    await open('#/schedule', 'schedule');
    // The nodes of the booking's last piece (a failure keeps what ran as a piece of its own).
    const nodesOf = () =>
      page.$$eval(`rect[data-booking="${job}"]`, (bars) => {
        const last = Math.max(...bars.map((b) => Number(b.getAttribute('data-piece'))));
        return [
          ...new Set(
            bars.filter((b) => Number(b.getAttribute('data-piece')) === last).map((b) => b.getAttribute('data-node')),
          ),
        ];
      });
    const before = await nodesOf();
    expect(before).toHaveLength(2);
    expect(await page.locator('rect[data-booking][stroke-dasharray="4 2"]').count()).toBeGreaterThan(0); // the hold
    expect(await page.textContent('.toolbar .muted')).toMatch(/\d+ bookings \(\d+ in view\), 0 failed nodes/);
    await page.screenshot({ path: path.join(shots, 'schedule.png') });

    const victim = before[0] as string;
    await open('#/nodes', 'nodes');
    await page.click(`button[data-action="fail-${victim}"]`);
    await page.waitForSelector(`button[data-action="repair-${victim}"]`);

    await open('#/schedule', 'schedule');
    const after = await nodesOf();
    expect(after).toHaveLength(2);
    expect(after).not.toContain(victim);
    expect(await page.locator(`rect[data-failed-node="${victim}"]`).count()).toBe(1);
    await page.screenshot({ path: path.join(shots, 'schedule-after-failure.png') });
  });

  it('updates the schedule live when an agreement is made elsewhere', async () => {
    await open('#/schedule', 'schedule');
    await page.waitForSelector('#live.on');
    const made = (
      await client.createAgreement(
        offerFromTemplate(await template('deadline-job'), [{ location: 'NodeCount', value: '1' }]),
      )
    ).agreementId;
    await page.waitForSelector(`rect[data-booking="${made}"]`, { timeout: 10_000 });
  });

  it('finds an agreement by search and shows its terms, allocation, signatures and audit history', async () => {
    const made = (
      await client.createAgreement(
        offerFromTemplate(await template('advance-reservation'), [{ location: 'NodeCount', value: '1' }]),
      )
    ).agreementId;
    await open('#/agreements', 'agreements');
    // Ids are time-ordered: agreements made in the same minute begin alike, their ends differ.
    await page.fill('input[type=search]', made.slice(-12));
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.click(`tr[data-key="${made}"]`);
    await page.waitForSelector('[data-field=state]');
    expect(await page.textContent('[data-field=state]')).toBe('Observed');
    expect(await page.textContent('[data-field=allocation]')).toMatch(/^1 nodes /);
    expect(await page.textContent('[data-field=signatures]')).toBe('not signed');
    expect(await page.locator('table tbody tr').first().textContent()).toContain('created');
    await page.screenshot({ path: path.join(shots, 'agreement.png'), fullPage: true });
  });

  it('lists negotiations with their holds, and accounts', async () => {
    await open('#/negotiations', 'negotiations');
    expect(await page.textContent('main')).toMatch(/Held until/);
    await open('#/accounts', 'accounts');
    expect(await page.textContent('h2')).toMatch(/^Accounts \(\d+\)$/);
  });
});
