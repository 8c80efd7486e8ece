import { describe, expect, it } from 'vitest';
import type { AgreementFilter } from '../../src/engine/ports.js';
import type { AgreementService } from '../../src/engine/agreements/agreement-service.js';
import { MigratedJobs } from '../../src/engine/migration/migrated-jobs.js';
import type { PeersConfig } from '../../src/engine/migration/peers.js';
import type { PeerProviders } from '../../src/engine/migration/ports.js';
import { MemoryAgreementRepository } from '../../src/store/memory-agreement-repository.js';
import { makeAgreement } from '../store/fixtures/make-agreement.js';

const migratedTo = {
  peer: 'cluster-b',
  remoteAgreementId: 'remote-1',
  remoteAddress: 'https://b/wsag/Agreement',
  at: new Date(0),
  price: { amount: 1, currency: 'EUR' },
};

describe('MigratedJobs', () => {
  it("finds the migrated jobs page by page without reading any agreement's document", async () => {
    const repository = new MemoryAgreementRepository();
    // More than a start-up page (2,000): the migrated ones sit on both sides of the page break.
    for (let i = 0; i < 2100; i++) {
      const id = `agr-${String(i).padStart(4, '0')}`;
      const migrated = i === 5 || i === 2050 || i === 2099;
      await repository.insert(
        makeAgreement({
          id,
          state: i === 2099 ? 'Terminated' : 'Observed',
          createdAt: new Date(i),
          ...(migrated ? { migratedTo } : {}),
        }),
      );
    }
    const filters: AgreementFilter[] = [];
    const list = repository.list.bind(repository);
    repository.list = async (filter = {}) => {
      filters.push(filter);
      return list(filter);
    };
    const changed: string[] = [];
    const jobs = new MigratedJobs({
      repository,
      agreements: {
        change: async (id: string) => {
          changed.push(id);
        },
      } as unknown as AgreementService,
      peers: { peers: [{ name: 'cluster-b' }] } as unknown as PeersConfig,
      providers: {
        agreementState: async () => ({ state: 'Complete', guaranteeTerms: [] }),
      } as unknown as PeerProviders,
      clock: { now: () => new Date(10_000) },
    });
    expect(await jobs.check()).toEqual(['agr-0005', 'agr-2050']);
    expect(changed).toEqual(['agr-0005', 'agr-2050']);
    expect(filters.length).toBeGreaterThan(1);
    for (const filter of filters) expect(filter).toMatchObject({ withoutDocument: true, limit: 2000 });
  });
});
