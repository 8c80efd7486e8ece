import { describe, expect, it } from 'vitest';
import type { SeenSignatures } from '../../src/engine/ports.js';

const at = (seconds: number) => new Date(Date.UTC(2030, 0, 1, 8, 0, seconds));

/** The SeenSignatures contract (src/engine/ports.ts); every implementation runs it. */
export function seenSignaturesContract(name: string, make: () => Promise<SeenSignatures> | SeenSignatures): void {
  describe(`${name} satisfies the SeenSignatures contract`, () => {
    it('takes a signature once until it expires, then forgets it', async () => {
      const seen = await make();
      expect(await seen.firstSeen('sig-a', at(300), at(0))).toBe(true);
      expect(await seen.firstSeen('sig-a', at(300), at(1))).toBe(false);
      expect(await seen.firstSeen('sig-b', at(300), at(1))).toBe(true);
      expect(await seen.firstSeen('sig-a', at(300), at(299))).toBe(false);
      // Past its expiry the message is refused as expired anyway: the digest need not be kept.
      expect(await seen.firstSeen('sig-a', at(700), at(301))).toBe(true);
    });
  });
}
