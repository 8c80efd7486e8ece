import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WsagClient } from '../src/client/wsag-client.js';
import { offerFromTemplate } from '../src/xml/offer-from-template.js';
import { withChargeAccount } from '../src/xml/offer-additions.js';
import { startServerProcess } from './support/server-process.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

interface Entry {
  kind: string;
  amount: number;
  heldChange: number;
  holdId?: string;
}

/**
 * kill -9 while agreements are being created (holds placed) and terminated (holds
 * settled), then a restart: every agreement the server answered for has exactly its hold
 * while it lives and none after, the ledger sums to the account's funds and held amount,
 * and nothing was charged or released twice.
 */
describe('the books across kill -9', () => {
  it('no hold lost or doubled, no double charge', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-books-restart-'));
    const env = { WSAG_ADMINS: 'anonymous', WSAG_EXECUTOR: 'none' };
    const first = await startServerProcess(dataDir, env);
    children.push(first.child);
    const post = (url: string, route: string, body: unknown) =>
      fetch(`${url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post(first.url, '/api/accounts', { id: 'lab', owner: 'anonymous', currency: 'EUR' })).status).toBe(
      201,
    );
    expect((await post(first.url, '/api/accounts/lab/allocations', { amount: 100_000 })).status).toBe(200);
    let client = new WsagClient(first.url);
    const template = (await client.templates()).find((t) => t.includes('advance-reservation-v1')) as string;
    const offer = withChargeAccount(offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]), {
      account: 'lab',
    });
    const acknowledged: string[] = [];
    const terminated: string[] = [];
    for (let i = 0; i < 6; i++) acknowledged.push((await client.createAgreement(offer)).agreementId);
    // A burst of creates and terminates, cut off by kill -9 part way.
    const burst = [
      ...acknowledged.slice(0, 4).map((id) =>
        client.terminate(id).then(
          () => void terminated.push(id),
          () => undefined,
        ),
      ),
      ...Array.from({ length: 30 }, () =>
        client.createAgreement(offer).then(
          (a) => void acknowledged.push(a.agreementId),
          () => undefined,
        ),
      ),
    ];
    await new Promise((resolve) => setTimeout(resolve, 60));
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await Promise.all([...burst, exited]);

    const second = await startServerProcess(dataDir, env);
    children.push(second.child);
    client = new WsagClient(second.url);
    const states = new Map((await client.agreements()).map((a) => [a.id, a.state]));
    for (const id of acknowledged) expect(states.has(id), `acknowledged agreement ${id} is there`).toBe(true);
    for (const id of terminated) expect(states.get(id)).toBe('Terminated');
    const account = (await (await fetch(`${second.url}/api/accounts/lab`)).json()) as { funds: number; held: number };
    const entries = ((await (await fetch(`${second.url}/api/accounts/lab/statement`)).json()) as { entries: Entry[] })
      .entries;
    const cents = (n: number) => Math.round(n * 100);
    expect(cents(account.funds)).toBe(entries.reduce((sum, e) => sum + cents(e.amount), 0));
    expect(cents(account.held)).toBe(entries.reduce((sum, e) => sum + cents(e.heldChange), 0));
    const placed = entries.filter((e) => e.kind === 'hold').map((e) => e.holdId);
    const released = entries.filter((e) => e.kind === 'release').map((e) => e.holdId);
    expect(new Set(placed).size).toBe(placed.length);
    expect(new Set(released).size).toBe(released.length);
    const open = placed.filter((h) => !released.includes(h)).sort();
    const live = [...states]
      .filter(([, state]) => state === 'Observed')
      .map(([id]) => `agreement:${id}`)
      .sort();
    expect(open).toEqual(live);
    expect(entries.filter((e) => e.kind === 'charge' || e.kind === 'fee')).toEqual([]); // nothing ran: terminations before the window charge nothing
    second.child.kill('SIGTERM');
  }, 60_000);
});
