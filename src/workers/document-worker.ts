/**
 * A thread of DocumentThreads: signs agreements with the key and chain it was started with
 * (workerData, as PEM) and reads the offers of CreateAgreement, Negotiate and Advertise
 * requests, exactly as the server's own thread would, checking them against the creation
 * constraints of the templates it was started with (document-tasks.ts). Each task is one
 * exported function (piscina's `name`).
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { TemplateLibrary, type TemplateSource } from '../xml/template-library.js';
import { documentTasks, THREAD_LOADED } from './document-tasks.js';

export type { NegotiationOfferParts, NegotiationOffersReading, OfferReading, ThreadFault } from './document-tasks.js';

export interface DocumentWorkerData {
  signing?: { keyPem: string; chainPem: string[] };
  /** The server's templates: offers read here have their creation constraints checked here too. */
  templates?: TemplateSource[];
}

const { signing, templates } = workerData as DocumentWorkerData;

export const { sign, readAgreementOffer, readNegotiationOffers } = documentTasks({
  ...(templates ? { library: TemplateLibrary.fromSources(templates) } : {}),
  ...(signing
    ? {
        credentials: {
          key: createPrivateKey(signing.keyPem),
          chain: signing.chainPem.map((pem) => new X509Certificate(pem)),
        },
      }
    : {}),
});

// Loaded: DocumentThreads.close may end the thread from now on (see threadsLoaded there).
parentPort?.postMessage(THREAD_LOADED);
