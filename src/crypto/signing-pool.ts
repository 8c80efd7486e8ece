import { Piscina } from 'piscina';
import type { AgreementSigner } from '../engine/ports.js';
import { signAgreement, type SigningCredentials } from './xml-signature.js';

/**
 * The provider's agreement signer, on worker threads (piscina) so that canonicalising and
 * signing run beside the event loop: on a two-core machine under load that was an eighth of
 * a CreateAgreement's time on the one busy core (docs/benchmarks.md). With no threads it
 * signs on the calling thread. `close()` ends the threads.
 */
export class SigningPool implements AgreementSigner {
  private constructor(
    private readonly credentials: SigningCredentials,
    private readonly pool: Piscina | undefined,
  ) {}

  static start(credentials: SigningCredentials, threads: number): SigningPool {
    if (threads === 0) return new SigningPool(credentials, undefined);
    // Run from the TypeScript sources (tests), the worker loads them through tsx.
    const worker = import.meta.url.endsWith('.ts') ? './signing-worker-from-sources.mjs' : './signing-worker.js';
    const pool = new Piscina({
      filename: new URL(worker, import.meta.url).href,
      workerData: {
        keyPem: credentials.key.export({ type: 'pkcs8', format: 'pem' }) as string,
        chainPem: credentials.chain.map((certificate) => certificate.toString()),
      },
      minThreads: threads,
      maxThreads: threads,
    });
    return new SigningPool(credentials, pool);
  }

  get threads(): number {
    return this.pool?.threads.length ?? 0;
  }

  async sign(document: string): Promise<string> {
    if (!this.pool) return signAgreement(document, this.credentials);
    return (await this.pool.run(document)) as string;
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
  }
}
