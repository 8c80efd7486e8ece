import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient } from '../../src/client/wsag-client.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { projectRoot } from '../support/server.js';

/**
 * The server started exactly as the README's first commands do (`npm
 * start`: the compiled server, nothing configured, so every caller is the party
 * `anonymous` and no one an operator) opens the dashboard on a schedule, not an error: the
 * party's own bookings labelled, clickable through to the agreement.
 */
const chromiumPath = process.env.WSAG_CHROMIUM ?? '/usr/bin/chromium';
const skip = process.env.WSAG_SKIP_BROWSER === '1';
const shots = path.join(projectRoot, 'test-results', 'screenshots');
let server: ServerProcess;
let browser: Browser;
let dataDir = '';

beforeAll(async () => {
  if (skip) return;
  if (!fs.existsSync(chromiumPath))
    throw new Error(
      `no Chromium at ${chromiumPath}: install Debian's chromium (.ci/run does), or set WSAG_SKIP_BROWSER=1`,
    );
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-first-hour-'));
  // As `npm start` runs it (on a free port rather than 8080).
  server = await startServerProcess(dataDir, {}, { compiled: true });
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  server?.child.kill('SIGTERM');
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(skip)('the first hour', () => {
  it("the landing view is a schedule with the party's own bookings, labelled and clickable", async () => {
    const client = new WsagClient(server.url);
    const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
    const { agreementId } = await client.createAgreement(
      offerFromTemplate(template, [{ location: 'NodeCount', value: '2' }]),
    );
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${server.url}/ui/`);
    await page.waitForSelector('body[data-ready="schedule"]');
    expect(await page.locator('.error').count()).toBe(0);
    expect(await page.textContent('h2')).toBe('Schedule');
    expect(await page.textContent('.toolbar .muted')).toMatch(
      /your bookings and others' busy time: 1 in view, 0 failed nodes, 0 promises at risk/,
    );
    // Labelled with the short id, and the level where the bar has room for it.
    expect(await page.locator(`text[data-label="${agreementId}"]`).first().textContent()).toMatch(
      new RegExp(`^${agreementId.slice(0, 8)}( Standard)?$`),
    );
    fs.mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, 'first-hour.png') });
    // On a smaller screen the toolbar and legend wrap rather than run off the page.
    await page.setViewportSize({ width: 1024, height: 768 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1024);
    await page.screenshot({ path: path.join(shots, 'first-hour-1024.png') });
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.locator(`rect[data-booking="${agreementId}"]`).first().click();
    await page.waitForSelector('body[data-ready="agreements"]');
    expect(page.url()).toContain(`#/agreements/${agreementId}`);
    expect(await page.textContent('h2')).toBe(`Agreement ${agreementId}`);
    // The list has a guarantee-state column and says when a search finds nothing.
    await page.goto(`${server.url}/ui/#/agreements`);
    await page.waitForSelector('body[data-ready="agreements"] table');
    expect(await page.locator('th').allTextContents()).toContain('guarantee');
    expect(await page.locator(`tr[data-key="${agreementId}"] td`).nth(3).textContent()).toBe('NotDetermined');
    await page.fill('input[type=search]', 'no-such-thing');
    expect(await page.textContent('[data-empty]')).toBe('no agreement matches "no-such-thing"');
    await page.close();
  });
});
