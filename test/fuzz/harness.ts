import { spawn } from 'node:child_process';
import http from 'node:http';
import fc from 'fast-check';
import { XmlElement } from 'libxml2-wasm';
import { WsagClient, type AgreementSummary } from '../../src/client/wsag-client.js';
import { parseXml } from '../../src/xml/libxml.js';
import { ns } from '../../src/xml/namespaces.js';
import { fuzzCase } from './mutations.js';
import { faceOf, recordSeeds, type FuzzRequest } from './seeds.js';

/**
 * The fuzz harness: mutated requests for every operation, sent `concurrency` at
 * a time to a running server, each answer checked against the rules every face keeps:
 *  - an answer at all, within `answerMs`;
 *  - no InternalError, no stack trace, no file path, no framework page;
 *  - SOAP answers (and WSDLs) well-formed XML, read by a parser that does not recover;
 *  - /api failures RFC 9457 problem documents;
 * and after each batch: /healthz answers within a second, a valid reservation is still
 * accepted (a poisoned plan shows at once), and every agreement the batch created keeps
 * its own guarantee objectives (its booking completes by CompletedBy, starts by StartBy,
 * and has the NodesAvailable it promises). Breaches are collected, not thrown, with the
 * request that caused each, so a run reports all it found.
 */
export interface FuzzOptions {
  url: string;
  runs: number;
  seed?: number;
  batch?: number;
  concurrency?: number;
  answerMs?: number;
  onBatch?: (done: number, report: FuzzReport) => void;
}

export interface FuzzReport {
  cases: number;
  batches: number;
  byStatus: Record<string, number>;
  faults: Record<string, number>;
  created: number;
  breaches: Array<{ rule: string; request: string; answer: string }>;
  /** The slowest /healthz after a batch, beyond a trivial reference server asked at the same moment (ms). */
  slowestHealthMs: number;
  slowestAnswerMs: number;
  /**
   * /healthz asked every 50 ms while the cases run: its 99th percentile and worst (ms), and the
   * worst beyond a trivial HTTP server in a process of its own asked at the same moment, so a
   * machine starved of CPU by other work does not count as the server stalling.
   */
  healthWhileRunning: { probes: number; p99Ms: number; maxMs: number; maxBeyondReferenceMs: number };
}

/** A trivial HTTP server in a process of its own: what answering takes on this machine right now. */
async function startReference(): Promise<{ url: string; stop(): void }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      "require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log(this.address().port); })",
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the reference server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGKILL') };
}

/** Milliseconds for GET `url`, at most 5 s. */
async function timedGet(url: string): Promise<{ ms: number; status: number }> {
  const started = Date.now();
  const status = await fetch(url, { signal: AbortSignal.timeout(5000) }).then(
    async (r) => {
      await r.arrayBuffer();
      return r.status;
    },
    () => 0,
  );
  return { ms: Date.now() - started, status };
}

const leak =
  /\bat .*\.(ts|js):\d+|<html|<!DOCTYPE html|\/work\/|\/home\/|node_modules|\b(?!InternalError)[A-Z]\w*Error:|\bstack\b/;

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const batch = options.batch ?? 10;
  const concurrency = options.concurrency ?? 6;
  const answerMs = options.answerMs ?? 10_000;
  const { seeds, validOffer } = await recordSeeds(options.url);
  const client = new WsagClient(options.url);
  const report: FuzzReport = {
    cases: 0,
    batches: 0,
    byStatus: {},
    faults: {},
    created: 0,
    breaches: [],
    slowestHealthMs: 0,
    slowestAnswerMs: 0,
    healthWhileRunning: { probes: 0, p99Ms: 0, maxMs: 0, maxBeyondReferenceMs: 0 },
  };
  const reference = await startReference();
  /** /healthz and the reference at the same moment: the server's time, and its time beyond the reference's. */
  const health = async () => {
    const [server, floor] = await Promise.all([timedGet(`${options.url}/healthz`), timedGet(reference.url)]);
    return { status: server.status, ms: server.ms, beyond: Math.max(0, server.ms - floor.ms) };
  };
  const breach = (rule: string, request: FuzzRequest, answer: string) => {
    if (report.breaches.length < 50)
      report.breaches.push({ rule, request: describe(request), answer: answer.slice(0, 600) });
  };

  const property = fc.asyncProperty(
    fc.array(fuzzCase(seeds), { minLength: batch, maxLength: batch }),
    async (requests) => {
      const created: Array<{ id: string; request: FuzzRequest }> = [];
      await pool(requests, concurrency, async (request) => {
        const started = Date.now();
        const answer = await send(options.url, request, answerMs).catch((error: Error) => ({
          status: 0,
          headers: {},
          body: `no answer: ${error.message}`,
        }));
        report.slowestAnswerMs = Math.max(report.slowestAnswerMs, Date.now() - started);
        report.cases++;
        report.byStatus[answer.status] = (report.byStatus[answer.status] ?? 0) + 1;
        for (const problem of check(request, answer)) breach(problem, request, answer.body);
        const code = faultCode(answer.body);
        if (code) report.faults[code] = (report.faults[code] ?? 0) + 1;
        const id =
          answer.status === 200 && /CreateAgreementResponse|CreatePendingAgreementResponse/.test(answer.body)
            ? /AgreementId[^>]*>([^<]+)</.exec(answer.body)?.[1]
            : undefined;
        if (id) created.push({ id, request });
      });
      report.batches++;
      report.created += created.length;
      // Between batches: healthy, still admitting, and what was created keeps its promises.
      const probe = await health();
      report.slowestHealthMs = Math.max(report.slowestHealthMs, probe.beyond);
      if (probe.status !== 200 || probe.beyond > 1000)
        breach(
          `/healthz answered ${probe.status} after ${probe.ms} ms (${probe.beyond} ms more than a trivial server at the same moment)`,
          requests[0] as FuzzRequest,
          '',
        );
      const observed = created.length > 0 ? await client.agreements({ state: 'Observed' }).catch(() => []) : [];
      for (const { id, request } of created) {
        for (const problem of await keptPromises(
          client,
          observed.find((a) => a.id === id),
        ))
          breach(problem, request, id);
        await client.terminate(id).catch(() => undefined);
      }
      try {
        const { agreementId } = await client.createAgreement(validOffer);
        await client.terminate(agreementId);
      } catch (error) {
        breach(
          `a valid reservation was refused after the batch: ${(error as Error).message}`,
          requests[0] as FuzzRequest,
          '',
        );
      }
      options.onBatch?.(report.cases, report);
      return true;
    },
  );
  const probes: number[] = [];
  let beyondReference = 0;
  let running = true;
  const probing = (async () => {
    while (running) {
      const probe = await health();
      probes.push(probe.ms);
      beyondReference = Math.max(beyondReference, probe.beyond);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    await fc.assert(property, {
      numRuns: Math.ceil(options.runs / batch),
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      endOnFailure: true,
    });
  } finally {
    running = false;
    await probing;
    reference.stop();
  }
  const sorted = probes.sort((a, b) => a - b);
  report.healthWhileRunning = {
    probes: sorted.length,
    p99Ms: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
    maxMs: sorted.at(-1) ?? 0,
    maxBeyondReferenceMs: beyondReference,
  };
  return report;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function check(request: FuzzRequest, answer: Answer): string[] {
  const problems: string[] = [];
  if (answer.status === 0) return [answer.body];
  if (leak.test(answer.body)) problems.push('the answer shows a stack, a path or a framework page');
  if (/InternalError/.test(answer.body)) problems.push('InternalError');
  const type = String(answer.headers['content-type'] ?? '');
  const face = faceOf(request);
  if (request.method === 'HEAD' || answer.status === 204 || answer.status === 304) return problems;
  if (face === 'soap' || (/xml/.test(type) && answer.body.length > 0)) {
    try {
      parseXml(answer.body, 'answer').dispose();
    } catch (error) {
      if (face === 'soap' || answer.status === 200) problems.push(`not well-formed XML: ${(error as Error).message}`);
    }
  }
  if (face === 'api' && answer.status >= 400) {
    if (!type.startsWith('application/problem+json'))
      problems.push(`an /api failure answered as ${type || 'no type'}, not a problem document`);
  }
  if (face !== 'soap' && answer.status >= 500) problems.push(`HTTP ${answer.status} outside a SOAP port`);
  return problems;
}

function faultCode(body: string): string | undefined {
  return /<bf:ErrorCode[^>]*>([^<]*)</.exec(body)?.[1] ?? /"title":"(\w+)"/.exec(body)?.[1];
}

/** An agreement the fuzz created keeps its own objectives (read from its document) for its booking. */
async function keptPromises(client: WsagClient, summary: AgreementSummary | undefined): Promise<string[]> {
  if (!summary?.start || !summary.end) return [];
  const id = summary.id;
  const document = await client.agreementDocument(id).catch(() => '');
  const problems: string[] = [];
  // The objectives are what the guarantee terms' KPI targets hold (not the same names elsewhere in the document): read once.
  const targets: Array<{ name: string; value: string }> = [];
  if (document) {
    const doc = parseXml(document, 'agreement document');
    try {
      for (const e of doc.find(
        '//wsag:GuaranteeTerm/wsag:ServiceLevelObjective/wsag:KPITarget/wsag:CustomServiceLevel/sla:*',
        { wsag: ns.wsag, sla: ns.sla },
      )) {
        if (e instanceof XmlElement) targets.push({ name: e.name, value: e.content.trim() });
      }
    } finally {
      doc.dispose();
    }
  }
  const objective = (name: string) => targets.filter((t) => t.name === name).map((t) => t.value);
  for (const at of objective('CompletedBy'))
    if (new Date(summary.end) > new Date(at))
      problems.push(`agreement ${id} completes at ${summary.end}, after its sla:CompletedBy ${at}`);
  for (const at of objective('StartBy'))
    if (new Date(summary.start) > new Date(at))
      problems.push(`agreement ${id} starts at ${summary.start}, after its sla:StartBy ${at}`);
  for (const nodes of objective('NodesAvailable'))
    if (Number(nodes) > summary.nodes)
      problems.push(`agreement ${id} books ${summary.nodes} nodes but promises sla:NodesAvailable ${nodes}`);
  const horizon = Date.now() + 366 * 86_400_000;
  if (!(new Date(summary.end).getTime() <= horizon))
    problems.push(`agreement ${id} ends at ${summary.end}, beyond the planning horizon`);
  return problems;
}

/** One request, every byte as given; `x-declared-length` lies about the length (a body over the limit, announced). */
function send(url: string, request: FuzzRequest, answerMs: number): Promise<Answer> {
  const target = new URL(url);
  const { 'x-declared-length': declared, ...headers } = request.headers;
  const body = request.body ?? Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: request.method,
        path: request.path,
        headers: { ...headers, 'content-length': declared ?? String(body.length), connection: 'close' },
        timeout: answerMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${answerMs} ms`)));
    req.on('error', reject);
    // An announced body over the limit is answered at once: the rest is never sent.
    req.end(declared ? body.subarray(0, 64) : body);
  });
}

async function pool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

function describe(request: FuzzRequest): string {
  const body = request.body?.toString('latin1') ?? '';
  return `${request.method} ${request.path} ${JSON.stringify(request.headers)} ${body.length > 400 ? `${body.slice(0, 400)}... (${body.length} bytes)` : body}`;
}
