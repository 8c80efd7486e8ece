import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Agreement } from '../../src/domain/agreement.js';
import { SqliteAgreementRepository } from '../../src/store/index.js';
import { makeAgreement } from './fixtures/make-agreement.js';

const dir = mkdtempSync(join(tmpdir(), 'wsag-extras-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Fields the run time and security add to an agreement survive a reopen of the file, with their Dates. */
describe('SqliteAgreementRepository extras', () => {
  it('keeps migratedTo (its time a Date again) and eligibleParties', async () => {
    const file = join(dir, 'extras.sqlite');
    const agreement: Agreement = {
      ...makeAgreement(),
      eligibleParties: ['CN=bob', 'CN=carol'],
      migratedTo: {
        peer: 'cluster-b',
        remoteAgreementId: 'r-1',
        remoteAddress: 'http://b.example/wsag/Agreement',
        at: new Date('2026-11-23T00:30:00Z'),
        price: { amount: 4.2, currency: 'EUR' },
        penalty: { amount: 500, currency: 'EUR' },
      },
    };
    const first = SqliteAgreementRepository.open(file);
    await first.insert(makeAgreement({ id: 'plain' }));
    await first.insert(agreement);
    await first.close();
    const second = SqliteAgreementRepository.open(file);
    const back = await second.get(agreement.id);
    expect(back).toEqual(agreement);
    expect(back?.migratedTo?.at).toBeInstanceOf(Date);
    const plain = await second.get('plain');
    expect(plain).not.toHaveProperty('migratedTo');
    expect(plain).not.toHaveProperty('eligibleParties');
    await second.close();
  });
});
