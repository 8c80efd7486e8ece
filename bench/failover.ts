/**
 * Leader kills under load (issue 56): two `npm start` instances on one PostgreSQL, clients
 * creating one-node deadline jobs through both in turn. Each round kills the planning leader
 * with SIGKILL and starts it again as a standby (as a supervisor would); the gap of a round
 * is from the kill to the first create that was sent after it and acknowledged. At the end:
 * every acknowledged agreement stored, no node booked twice.
 *
 *   npm run bench:failover -- [--rounds 20] [--clients 16]
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { WsagClient, WsagFault } from '../src/client/wsag-client.js';
import { PgStore } from '../src/store/postgres/pg-store.js';
import { offerFromTemplate } from '../src/xml/offer-from-template.js';
import { startPostgres } from '../test/support/postgres.js';
import { startProcess } from './server-process.js';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, clients: { type: 'string' } } });
const rounds = Number(values.rounds ?? 20);
const clientCount = Number(values.clients ?? 16);

interface Instance {
  child: ChildProcess;
  url: string;
}

const pg = await startPostgres({ durable: true });
const dirs: string[] = [];
const children = new Set<ChildProcess>();
async function instance(): Promise<Instance> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-bench-failover-'));
  dirs.push(dir);
  const started = await startProcess(dir, {
    WSAG_DATABASE_URL: pg.url,
    WSAG_CLUSTER_NODES: '4096',
    WSAG_EXECUTOR: 'none',
  });
  children.add(started.child);
  return { child: started.child, url: started.url };
}
const roleOf = async (i: Instance): Promise<string | undefined> =>
  ((await (await fetch(`${i.url}/api/cluster`)).json()) as { role?: string }).role;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

try {
  const instances: Instance[] = [await instance(), await instance()];
  const template = (await new WsagClient(instances[0]?.url as string).templates()).find((t) =>
    t.includes('deadline-job-v1'),
  ) as string;
  const offer = offerFromTemplate(template, [{ location: 'NodeCount', value: '1' }]);
  const acknowledged: Array<{ id: string; sent: number }> = [];
  const refusals = new Map<string, number>();
  let stop = false;
  const loops = Array.from({ length: clientCount }, async (_, k) => {
    for (let i = k; !stop; i++) {
      const target = instances[i % instances.length] as Instance;
      const sent = Date.now();
      try {
        acknowledged.push({ id: (await new WsagClient(target.url).createAgreement(offer)).agreementId, sent });
      } catch (error) {
        const code = error instanceof WsagFault ? error.code : 'no answer (the instance was killed)';
        refusals.set(code, (refusals.get(code) ?? 0) + 1);
        await sleep(50);
      }
    }
  });

  const gaps: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const before = acknowledged.length;
    while (acknowledged.length < before + 50) await sleep(20);
    const roles = await Promise.all(instances.map(roleOf));
    const leaderIndex = roles.indexOf('leader');
    if (leaderIndex < 0) throw new Error(`no leader before round ${round}: ${roles.join(', ')}`);
    const leader = instances[leaderIndex] as Instance;
    const exited = new Promise((resolve) => leader.child.once('exit', resolve));
    const killedAt = Date.now();
    leader.child.kill('SIGKILL');
    await exited;
    children.delete(leader.child);
    const deadline = killedAt + 60_000;
    let first: number | undefined;
    while (first === undefined && Date.now() < deadline) {
      first = acknowledged.find((a) => a.sent > killedAt) && Date.now();
      if (first === undefined) await sleep(5);
    }
    // The acknowledgement arrived by the time it was seen: its own time is the gap's end.
    const gap = (first ?? deadline) - killedAt;
    gaps.push(gap);
    console.log(`round ${round}: ${(gap / 1000).toFixed(2)} s from the kill to the first create answered after it`);
    // The supervisor starts it again; it stands by.
    instances[leaderIndex] = await instance();
  }
  stop = true;
  await Promise.all(loops);

  const store = await PgStore.open(pg.url, { readOnly: true });
  let lost = 0;
  let doubleBooked = 0;
  try {
    const agreements = await store.agreements.list({ withoutDocument: true });
    const stored = new Set(agreements.map((a) => a.id));
    lost = acknowledged.filter((a) => !stored.has(a.id)).length;
    const byNode = new Map<string, Array<{ start: number; end: number }>>();
    for (const a of agreements)
      for (const s of a.allocation?.segments ?? [])
        for (const node of [...s.nodeIds, ...s.spareNodeIds]) {
          const uses = byNode.get(node) ?? [];
          uses.push({ start: s.start.getTime(), end: s.end.getTime() });
          byNode.set(node, uses);
        }
    for (const uses of byNode.values()) {
      uses.sort((x, y) => x.start - y.start);
      for (let i = 1; i < uses.length; i++)
        if ((uses[i] as { start: number }).start < (uses[i - 1] as { end: number }).end) doubleBooked++;
    }
  } finally {
    await store.close();
  }
  const sorted = [...gaps].sort((a, b) => a - b);
  const p50 = sorted[Math.floor((sorted.length - 1) / 2)] as number;
  console.log(
    `\n${rounds} leader kills, ${clientCount} clients over two instances, ${os.cpus().length} × ` +
      `${os.cpus()[0]?.model.trim()}, Node ${process.version}:\n` +
      `gap from kill to the first answered create: p50 ${(p50 / 1000).toFixed(2)} s, max ` +
      `${((sorted.at(-1) as number) / 1000).toFixed(2)} s; ${acknowledged.length} acknowledged, ${lost} lost, ` +
      `${doubleBooked} node bookings overlapping; refused: ${JSON.stringify(Object.fromEntries(refusals))}`,
  );
  if (lost > 0 || doubleBooked > 0 || (sorted.at(-1) as number) > 2000) process.exitCode = 1;
} finally {
  for (const child of children) child.kill('SIGKILL');
  await pg.stop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
}
