import type { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { faultClasses, InternalError, ServiceUnavailable } from '../domain/errors.js';
import type { AgreementSigner } from '../engine/ports.js';
import { signAgreement, type SigningCredentials } from '../crypto/xml-signature.js';
import {
  sameThreadOfferReader,
  type AgreementOfferInput,
  type AgreementOfferReader,
} from '../soap/agreement-offer-input.js';
import type { SoapRequest } from '../soap/envelope.js';
import {
  sameThreadNegotiationOfferReader,
  type NegotiationOfferInput,
  type NegotiationOfferReader,
} from '../soap/negotiation-offer-input.js';
import type { XmlNegotiationOffer } from '../xml/negotiation-reader.js';
import { XmlReceivedOffer } from '../xml/offer-reader.js';
import type { TemplateSource } from '../xml/template-library.js';
import { THREAD_LOADED } from './document-tasks.js';
import type { DocumentWorkerData, NegotiationOffersReading, OfferReading, ThreadFault } from './document-worker.js';

/**
 * Tasks piscina may hand a thread before it finishes the one it runs (piscina's default is
 * one). With one, the thread sleeps after every task until the event loop, itself busy,
 * has taken the answer and posted the next: under load the thread idled most of the time
 * and every task cost both threads a wake-up. With tasks waiting on the thread it works
 * through them back to back (docs/decisions/0001-document-threads.md). The tasks are
 * synchronous, so they still run one at a time and in order.
 */
const TASKS_WAITING_PER_THREAD = 16;

/**
 * Tasks that may wait in the pool's queue once every thread holds its TASKS_WAITING_PER_THREAD.
 * Beyond them, work stays on the calling thread: a task would wait behind two dozen others
 * (about 9 ms of a thread's work), while the event loop, which has time when the threads are
 * the busier side, does it in a fraction of a millisecond and spares both threads the hand-over.
 * Under 64 concurrent creates on two cores, in paired runs: creates +2-7 % a second, p99 about
 * -12 % (docs/decisions/0001-document-threads.md). Where the event loop is the busier side
 * (negotiations) the threads' queue seldom gets that long: -1 to -3 %, within the runs' spread.
 */
const TASKS_QUEUED_BEFORE_WORK_STAYS = 8;

/**
 * Each document thread's young generation, in MiB: 4 MiB semi-spaces (V8 makes it three
 * times the semi-space). It holds only where Node runs without `--max-semi-space-size`,
 * which sets every thread's; then the event loop takes V8's default (16 MiB semi-spaces on
 * a 64-bit host with memory to spare) while the threads stay small: their tasks are
 * synchronous, so little outlives a cycle, and a larger one bought nothing (docs/decisions/0003-node-flags.md),
 * while each would otherwise keep 32 MiB under load.
 */
export const DOCUMENT_THREAD_YOUNG_GENERATION_MIB = 12;

/**
 * The document work DocumentThreads does: reading a CreateAgreement or Advertise offer, reading a Negotiate message's
 * offers, signing an agreement.
 */
export type DocumentWork = 'read-offer' | 'read-negotiation-offers' | 'sign';

/**
 * One piece of document work done: where it ran, and the seconds from asking to the answer (a thread's queue included).
 */
export interface DocumentWorkDone {
  work: DocumentWork;
  on: 'thread' | 'event-loop';
  seconds: number;
}

/**
 * The document work that needs nothing but the document: reading the offers of
 * CreateAgreement, Negotiate and Advertise (parse, schema validation, the domain view) and
 * signing agreements. On worker threads (piscina) it runs beside the event loop, which
 * keeps admission, the store and HTTP; with no threads, on the calling thread. Either way
 * the results and faults are the same. `close()` ends the threads.
 */
export class DocumentThreads implements AgreementOfferReader, NegotiationOfferReader {
  /** Set by `close`: work the pool ends from then on was not done. */
  private closing = false;

  /** Signs agreements as the provider: present when started with signing credentials. */
  readonly signer?: AgreementSigner;

  private constructor(
    private readonly pool: Piscina | undefined,
    credentials: SigningCredentials | undefined,
    private readonly busy: () => boolean,
    private readonly observe?: (done: DocumentWorkDone) => void,
    /** Resolves once every thread has loaded its tasks (or ended). */
    private readonly loaded: Promise<void> = Promise.resolve(),
  ) {
    if (credentials) this.signer = { sign: (document) => this.sign(document, credentials) };
  }

  /**
   * `busy` says whether other requests are in progress. When none is, the work stays on the
   * calling thread: handing it over would only add two thread wake-ups to the one request's
   * time (a single client's CreateAgreement 2.8 -> 3.3 ms), with nothing to overlap it with.
   * With `templates` (the server's, TemplateLibrary.sources) the threads check the offers
   * they read against the creation constraints of the template each names. `observe` is told
   * of every piece of work once done (the metrics: how long work waited for a thread).
   */
  static start(
    threads: number,
    options: {
      credentials?: SigningCredentials;
      busy?: () => boolean;
      templates?: TemplateSource[];
      observe?: (done: DocumentWorkDone) => void;
    } = {},
  ): DocumentThreads {
    const { credentials, busy = () => true, templates, observe } = options;
    if (threads === 0) return new DocumentThreads(undefined, credentials, busy, observe);
    // Run from the TypeScript sources (tests), the worker loads them through tsx.
    const worker = import.meta.url.endsWith('.ts') ? './document-worker-from-sources.mjs' : './document-worker.js';
    const workerData: DocumentWorkerData = {
      ...(credentials
        ? {
            signing: {
              keyPem: credentials.key.export({ type: 'pkcs8', format: 'pem' }) as string,
              chainPem: credentials.chain.map((c) => c.toString()),
            },
          }
        : {}),
      ...(templates ? { templates } : {}),
    };
    const pool = new Piscina({
      filename: new URL(worker, import.meta.url).href,
      workerData,
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: TASKS_WAITING_PER_THREAD,
      resourceLimits: { maxYoungGenerationSizeMb: DOCUMENT_THREAD_YOUNG_GENERATION_MIB },
    });
    return new DocumentThreads(pool, credentials, busy, observe, threadsLoaded(pool));
  }

  /**
   * Threads when WSAG_DOCUMENT_THREADS is unset: one core stays with the event loop and one
   * with the rest of the process (the log syncs, garbage collection, the OS), the others
   * read offers and sign; on two cores one thread still pays (docs/benchmarks.md: the loop
   * hands it half its work), on one core none does.
   */
  static defaultCount(cores: number): number {
    return cores < 2 ? 0 : Math.max(1, cores - 2);
  }

  /** The threads themselves, for tests. */
  get workers(): readonly Worker[] {
    return this.pool?.threads ?? [];
  }

  get threads(): number {
    return this.pool?.threads.length ?? 0;
  }

  /** Tasks the threads have finished (none when the work stayed on the calling thread). */
  get tasksDoneOnThreads(): number {
    return this.pool?.completed ?? 0;
  }

  /** Whether a reading or signing asked for now would go to a document thread. */
  get handsWorkOver(): boolean {
    return this.handOver !== undefined;
  }

  /**
   * The pool, when the work should go to it now: while other requests are in progress, unless the threads are behind.
   */
  private get handOver(): Piscina | undefined {
    return this.pool && this.busy() && this.pool.queueSize < TASKS_QUEUED_BEFORE_WORK_STAYS ? this.pool : undefined;
  }

  readAgreementOffer(request: SoapRequest, input: AgreementOfferInput): Promise<XmlReceivedOffer> {
    const pool = request.text === undefined ? undefined : this.handOver;
    return this.timed('read-offer', pool, async () =>
      pool
        ? new XmlReceivedOffer((await read<OfferReading>(pool, 'readAgreementOffer', request, input)).parts)
        : sameThreadOfferReader.readAgreementOffer(request, input),
    );
  }

  readNegotiationOffers(request: SoapRequest, input: NegotiationOfferInput): Promise<XmlNegotiationOffer[]> {
    const pool = request.text === undefined ? undefined : this.handOver;
    return this.timed('read-negotiation-offers', pool, async () =>
      pool
        ? (await read<NegotiationOffersReading>(pool, 'readNegotiationOffers', request, input)).offers.map((offer) => ({
            ...offer,
            offer: new XmlReceivedOffer(offer.offer),
          }))
        : sameThreadNegotiationOfferReader.readNegotiationOffers(request, input),
    );
  }

  private sign(document: string, credentials: SigningCredentials): Promise<string> {
    const pool = this.handOver;
    return this.timed('sign', pool, async () =>
      pool ? ((await pool.run(document, { name: 'sign' })) as string) : signAgreement(document, credentials),
    );
  }

  /**
   * Runs `run` and, when observed, tells how long the `work` took and where (on `pool`'s threads or here), failed or
   * not.
   */
  private timed<T>(work: DocumentWork, pool: Piscina | undefined, perform: () => Promise<T>): Promise<T> {
    // Work a closing pool ended (a leader stepping down, a server stopping) was not done: the caller may try again.
    const run = () =>
      perform().catch((error: unknown) =>
        Promise.reject(
          this.closing
            ? new ServiceUnavailable('the server stopped while it read the request: nothing was done; try again')
            : error,
        ),
      );
    const observe = this.observe;
    if (!observe) return run();
    const started = performance.now();
    const answer = run();
    const done = () => {
      try {
        observe({ work, on: pool ? 'thread' : 'event-loop', seconds: (performance.now() - started) / 1000 });
      } catch {
        // Counting the work must never fail it, nor leave a rejection nobody handles.
      }
    };
    answer.then(done, done);
    return answer;
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.loaded;
    await this.pool?.destroy();
  }
}

/** How long `close` waits at most for a thread still loading its tasks. */
const LOADING_WAIT_MS = 10_000;

/**
 * Resolves once each of the pool's threads has posted THREAD_LOADED or ended, or after
 * LOADING_WAIT_MS. Why: ending a thread while Node 20 still instantiates its module aborts
 * the whole process (a fatal "v8::Module::IsGraphAsync must be used on an instantiated
 * module"), which a server closed right after it started (tests) ran into.
 */
function threadsLoaded(pool: Piscina): Promise<void> {
  const threads = [...pool.threads];
  let pending = threads.length;
  return new Promise<void>((resolve) => {
    const timer = setTimeout(finish, LOADING_WAIT_MS);
    const onMessage = (message: unknown) => {
      if (message === THREAD_LOADED) settled();
    };
    function settled(): void {
      if (--pending <= 0) finish();
    }
    function finish(): void {
      clearTimeout(timer);
      pool.off('message', onMessage);
      for (const thread of threads) thread.off('exit', settled);
      resolve();
    }
    if (pending === 0) return finish();
    pool.on('message', onMessage);
    for (const thread of threads) thread.once('exit', settled);
  });
}

/**
 * The request's text read by the thread's function `name`; the fault it reported raised as the calling thread would.
 */
async function read<Reading extends object>(
  pool: Piscina,
  name: string,
  request: SoapRequest,
  input: AgreementOfferInput | NegotiationOfferInput,
): Promise<Exclude<Reading, ThreadFault>> {
  const reading = (await pool.run({ text: request.text, input }, { name })) as Reading;
  if ('fault' in reading) throw raised((reading as ThreadFault).fault);
  return reading as Exclude<Reading, ThreadFault>;
}

/** The fault a thread reported, as the class the calling thread would have raised. */
function raised(fault: { code: string; message: string }): Error {
  const Fault = faultClasses[fault.code] ?? InternalError;
  return new Fault(fault.message);
}
