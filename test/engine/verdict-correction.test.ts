import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credit } from '../../src/domain/accounts.js';
import { postRuntimeReport } from '../../src/domain/post-runtime-report.js';
import type { CorrectionOutcome } from '../../src/engine/accounting/index.js';
import { VerdictCorrections } from '../../src/engine/accounting/index.js';
import type { StoredReport } from '../../src/engine/execution/ports.js';
import { MemoryAccountStore } from '../../src/store/memory-account-store.js';
import { ReportFiles } from '../../src/store/report-files.js';
import { withChargeAccount } from '../../src/xml/offer-additions.js';
import { wsag } from '../cli/support.js';
import { makeAgreement } from '../store/fixtures/make-agreement.js';
import {
  at,
  deadlineOffer,
  getJson,
  planOf,
  postJson,
  simulatedServer,
  type SimulatedServer,
} from './run-time-support.js';

/**
 * An operator corrects a recorded violation: the term becomes Fulfilled, the
 * penalty credited to the charge account is taken back by one compensating entry, the report
 * and the audit trail keep who corrected what and why, and a correction cut short is
 * finished by sending it again, never applied twice. The violation is a real one (Legacy,
 * a node failed halfway, no checkpoint: execution-scenarios.test.ts), which the operator
 * here declares false.
 */
describe('correcting a false violation', () => {
  let s: SimulatedServer;
  let violated: string;
  let running: string;
  type Line = { kind: string; amount: number; key: string; note: string };
  const statement = async () =>
    (await getJson<{ account: { funds: number }; entries: Line[] }>(`${s.url}/api/accounts/astro/statement`)).body;
  const correct = (id: string, body: unknown) =>
    postJson<CorrectionOutcome & { error?: string; message?: string }>(
      `${s.url}/api/agreements/${id}/corrections`,
      body,
    );

  beforeAll(async () => {
    s = await simulatedServer({ nodes: 8, sqlite: true });
    expect((await wsag(['account', 'create', 'astro', '--owner', 'anonymous'], { url: s.url })).code).toBe(0);
    expect((await wsag(['account', 'deposit', 'astro', '500'], { url: s.url })).code).toBe(0);
    const offer = withChargeAccount(await deadlineOffer(s.client, { level: 'Legacy', deadline: at(5000) }), {
      account: 'astro',
    });
    violated = (await s.client.createAgreement(offer)).agreementId;
    const node = (await planOf(s)).bookings.find((b) => b.id === violated)?.nodeIds[0] as string;
    await s.advanceTo(1800);
    expect((await postJson(`${s.url}/api/nodes/${node}/fail`)).status).toBe(200);
    await s.execution.idle();
    await s.advanceTo(5000 + 45 * 60);
    await s.execution.advance(s.clock.now());
    await s.advanceTo(5000 + 46 * 60);
    expect((await s.client.state(violated)).guaranteeTerms).toEqual([
      { termName: 'CompletionByDeadline', state: 'Violated' },
    ]);
    running = (
      await s.client.createAgreement(await deadlineOffer(s.client, { level: 'Standard', deadline: at(30_000) }))
    ).agreementId;
  }, 60_000);
  afterAll(async () => s?.close());

  it('refuses what cannot be corrected, by name', async () => {
    const refused = async (id: string, body: unknown, status: number, error: string, message: RegExp) => {
      const answer = await correct(id, body);
      expect([answer.status, answer.body.error]).toEqual([status, error]);
      expect(answer.body.message).toMatch(message);
    };
    await refused(violated, { term: 'CompletionByDeadline' }, 400, 'InvalidTerms', /needs a reason/);
    await refused(
      violated,
      { term: 'CompletionByDeadline', reason: 'x'.repeat(1001) },
      400,
      'InvalidTerms',
      /1001 characters long; at most 1000/,
    );
    await refused(violated, { reason: 'no term' }, 400, 'MalformedMessage', /"term" is missing/);
    await refused(
      violated,
      { term: 'Nope', reason: 'r' },
      404,
      'UnknownResource',
      /no judged guarantee term "Nope"; its terms: CompletionByDeadline/,
    );
    await refused(
      'no-such-agreement',
      { term: 'CompletionByDeadline', reason: 'r' },
      404,
      'UnknownResource',
      /no agreement with id "no-such-agreement"/,
    );
    await refused(
      running,
      { term: 'CompletionByDeadline', reason: 'r' },
      409,
      'InvalidStateTransition',
      /is Observed: only the verdicts of a Complete agreement/,
    );
    // Nothing changed.
    expect((await s.client.state(violated)).guaranteeTerms[0]?.state).toBe('Violated');
  });

  it('makes the term Fulfilled, withdraws the credited penalty once, and keeps who, when and why', async () => {
    const before = await statement();
    const credited = before.entries.filter((e) => e.kind === 'penalty-credit');
    expect(credited.map((e) => e.amount)).toEqual([100]);

    const cli = await wsag(
      ['correct', violated, '--term', 'CompletionByDeadline', '--reason', 'the plan left the node start-up out'],
      { url: s.url },
    );
    expect(cli.code).toBe(0);
    expect(cli.stdout).toBe(
      `agreement ${violated}: CompletionByDeadline corrected to Fulfilled\n  penalty withdrawn from account astro: 100.00 EUR`,
    );
    await s.accounting.idle();

    expect((await s.client.state(violated)).guaranteeTerms).toEqual([
      { termName: 'CompletionByDeadline', state: 'Fulfilled' },
    ]);
    const after = await statement();
    const withdrawn = after.entries.filter((e) => e.kind === 'penalty-withdrawal');
    expect(withdrawn).toEqual([
      expect.objectContaining({ amount: -100, key: `correction:${violated}/CompletionByDeadline` }),
    ]);
    expect(withdrawn[0]?.note).toMatch(
      /corrected by anonymous, penalty of 100\.00 EUR withdrawn: the plan left the node start-up out$/,
    );
    expect(after.account.funds).toBe(before.account.funds - 100);
    expect(after.entries).toHaveLength(before.entries.length + 1);

    const report = (await getJson<StoredReport['report']>(`${s.url}/api/agreements/${violated}/report`)).body;
    expect(report.guarantees[0]).toMatchObject({
      state: 'Fulfilled',
      explanation: expect.stringMatching(
        /\[corrected to Fulfilled by anonymous at .+: the plan left the node start-up out\]$/,
      ),
    });
    expect(report.guarantees[0]?.penalty).toBeUndefined();
    expect(report.totals.penalties).toEqual([]);
    expect(report.corrections).toEqual([
      expect.objectContaining({
        term: 'CompletionByDeadline',
        from: 'Violated',
        to: 'Fulfilled',
        by: 'anonymous',
        withdrawnPenalty: expect.objectContaining({ amount: 100, currency: 'EUR' }),
      }),
    ]);
    const text = await (await fetch(`${s.url}/api/agreements/${violated}/report?format=text`)).text();
    expect(text).toContain('Totals: penalties none; excused none; rewards none');
    expect(text).toMatch(
      /Corrected: CompletionByDeadline Violated to Fulfilled by anonymous at \S+, penalty of 100\.00 EUR withdrawn: the plan left the node start-up out/,
    );

    const detail = (
      await getJson<{ history: Array<{ actor: string; action: string; details: Record<string, unknown> }> }>(
        `${s.url}/api/agreements/${violated}`,
      )
    ).body;
    expect(detail.history.filter((h) => h.action === 'guarantee-corrected')).toEqual([
      expect.objectContaining({
        actor: 'anonymous',
        details: expect.objectContaining({
          term: 'CompletionByDeadline',
          from: 'Violated',
          guaranteeState: 'Fulfilled',
          reason: 'the plan left the node start-up out',
          withdrawnPenalty: { amount: 100, currency: 'EUR' },
        }),
      }),
    ]);

    // Once only: the same correction again is refused, and the books do not move.
    const again = await correct(violated, { term: 'CompletionByDeadline', reason: 'again' });
    expect([again.status, again.body.error]).toEqual([409, 'InvalidStateTransition']);
    expect(again.body.message).toMatch(
      /was corrected already, by anonymous at .+: the plan left the node start-up out$/,
    );
    expect((await statement()).entries).toHaveLength(after.entries.length);
  });
});

/**
 * The steps one by one, on the books in memory: a correction cut short after the report and
 * the ledger (the agreement not yet stored) is finished by sending it again, and the penalty
 * is withdrawn once; a caller who is not an operator is refused before anything is read.
 */
describe('a correction cut short', () => {
  const id = 'agr-cut';
  const term = 'CompletionByDeadline';
  const penalty = {
    amount: 100,
    currency: 'EUR',
    lines: [{ per: 'PT30M', units: 2, rate: 50, amount: 100, capped: false, currency: 'EUR' }],
  };
  const admin = { identity: 'operator', isAdmin: true };

  async function books() {
    const clock = { now: () => new Date('2026-11-28T12:00:00Z') };
    const accounts = new MemoryAccountStore();
    await accounts.createAccount({
      id: 'astro',
      kind: 'user',
      owner: 'alice',
      members: [],
      currency: 'EUR',
      overdraft: { kind: 'none' },
      funds: 0,
      held: 0,
      allocated: 0,
      createdAt: clock.now(),
      updatedAt: clock.now(),
    });
    await accounts.apply('astro', `settle:${id}`, (a) =>
      credit(a, 'penalty-credit', 10_000, clock.now(), `settle:${id}`, 'penalties the provider owes'),
    );
    let agreement = makeAgreement({
      id,
      state: 'Complete',
      guaranteeTerms: [{ termName: term, state: 'Violated' }],
      request: { ...makeAgreement().request, chargeAccount: { account: 'astro' } },
    });
    const reports = new ReportFiles(fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-corrections-')));
    const record = {
      jobId: id,
      phases: [],
      checkpoints: [],
      missedCheckpoints: [],
      outages: [],
      restarts: [],
      suspensions: [],
    };
    const { report, text } = postRuntimeReport({
      agreementId: id,
      request: agreement.request,
      guaranteeTerms: [],
      record,
      generatedAt: clock.now(),
      evaluations: [{ term, kpi: 'CompletedBy', state: 'Violated', explanation: 'completed 45 minutes late', penalty }],
    });
    await reports.save(id, { report, text });
    const settled: string[] = [];
    let crash = true;
    const deps = {
      repository: { get: async (wanted: string) => (wanted === id ? agreement : undefined) },
      reports,
      accounts,
      clock,
      settlement: { agreementChanged: async (a: { id: string }) => void settled.push(a.id) },
      agreements: {
        change: async (_id: string, update: (a: typeof agreement) => typeof agreement) => {
          if (crash) throw new Error('the server stopped');
          agreement = update(agreement);
          return agreement;
        },
      },
    };
    return {
      deps,
      accounts,
      reports,
      settled,
      agreement: () => agreement,
      recover: () => {
        crash = false;
      },
    };
  }

  it('is finished by sending it again, and the penalty is withdrawn once', async () => {
    const b = await books();
    const corrections = new VerdictCorrections(b.deps);
    await expect(corrections.correct(id, term, 'start-up counted', admin)).rejects.toThrow('the server stopped');
    expect((await b.accounts.account('astro'))?.funds).toBe(0);
    expect(b.agreement().guaranteeTerms[0]?.state).toBe('Violated');
    expect((await b.reports.read(id))?.report.corrections).toHaveLength(1);

    b.recover();
    const outcome = await corrections.correct(id, term, 'start-up counted', admin);
    expect(outcome).toMatchObject({
      state: 'Fulfilled',
      correction: { by: 'operator', reason: 'start-up counted' },
      withdrawn: { account: 'astro', amount: 100, currency: 'EUR' },
    });
    expect(b.agreement().guaranteeTerms).toEqual([{ termName: term, state: 'Fulfilled' }]);
    expect((await b.accounts.statement('astro')).map((e) => [e.kind, e.amount])).toEqual([
      ['penalty-credit', 10_000],
      ['penalty-withdrawal', -10_000],
    ]);
    expect((await b.reports.read(id))?.report.corrections).toHaveLength(1);
    // The books were brought up to date before each attempt took anything back.
    expect(b.settled).toEqual([id, id]);
    await expect(corrections.correct(id, term, 'again', admin)).rejects.toThrow(/was corrected already, by operator/);
  });

  it('refuses a caller who is not an operator before reading anything', async () => {
    const b = await books();
    await expect(
      new VerdictCorrections(b.deps).correct(id, term, 'mine', { identity: 'alice', isAdmin: false }),
    ).rejects.toThrow('only operators (WSAG_ADMINS) correct guarantee verdicts; alice is not one');
    expect(b.settled).toEqual([]);
    expect((await b.reports.read(id))?.report.corrections).toBeUndefined();
  });
});
