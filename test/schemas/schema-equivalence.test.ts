/**
 * Our own schemas (schemas/all.xsd, no catalog) must judge every document of the corpus the
 * same way as the reference WS-Agreement schemas (test/reference/ws-agreement/all.xsd
 * with its catalog) - and as the corpus says (valid/ accepted, invalid/ rejected).
 *
 * The one deliberate difference (ItemConstraint content, see ws-agreement-types.xsd) is pinned
 * down by corpus/differences/.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { requireTool } from '../support/tools.js';
import {
  REFERENCE_SAMPLE_TEMPLATE,
  cleanupScratch,
  corpusFiles,
  firstErrorElement,
  label,
  type Verdict,
  validateAllWithOurs,
  validateAllWithReference,
} from './helpers.js';

const haveXmllint = requireTool('xmllint');

interface Case {
  name: string;
  file: string;
  expectValid: boolean;
}

const validCases: Case[] = [
  { name: 'reference sample: wsag4j-sample-template.filled.xml', file: REFERENCE_SAMPLE_TEMPLATE, expectValid: true },
  ...corpusFiles('valid').map((file) => ({ name: `valid/${label(file)}`, file, expectValid: true })),
];
const invalidCases: Case[] = corpusFiles('invalid').map((file) => ({
  name: `invalid/${label(file)}`,
  file,
  expectValid: false,
}));
/** Deliberate differences: rejected by the reference, accepted by ours. */
const differenceCases: Case[] = corpusFiles('differences').map((file) => ({
  name: `differences/${label(file)}`,
  file,
  expectValid: true,
}));

/** Each schema set is compiled once and validates the whole corpus in one xmllint run. */
let verdicts: { ref: Map<string, Verdict>; ours: Map<string, Verdict> } | undefined;
function verdictsFor(file: string): { ref: Verdict; ours: Verdict } {
  if (verdicts === undefined) {
    const all = [...validCases, ...invalidCases, ...differenceCases].map((c) => c.file);
    verdicts = { ref: validateAllWithReference(all), ours: validateAllWithOurs(all) };
  }
  const ref = verdicts.ref.get(file);
  const ours = verdicts.ours.get(file);
  if (ref === undefined || ours === undefined) throw new Error(`no verdict for ${file}`);
  return { ref, ours };
}

if (!haveXmllint) {
  it.skip('xmllint is not on PATH and WSAG_SKIP_INTEROP=1: schema equivalence tests skipped', () => {});
}

describe.runIf(haveXmllint)('schemas/all.xsd agrees with the reference WS-Agreement schemas', () => {
  afterAll(cleanupScratch);

  it('has a corpus worth the name', () => {
    expect(validCases.length).toBeGreaterThanOrEqual(9);
    expect(invalidCases.length).toBeGreaterThanOrEqual(12);
  });

  it.each([...validCases, ...invalidCases])(
    '$name: same verdict as the reference, and the expected one',
    ({ file, expectValid }) => {
      const { ref, ours } = verdictsFor(file);
      expect(ours.valid, 'our verdict differs from the reference verdict').toBe(ref.valid);
      expect(ref.valid, 'the reference verdict is not the expected one: fix the corpus').toBe(expectValid);
      expect(ours.valid).toBe(expectValid);
      if (expectValid) {
        expect(ours.errors).toEqual([]);
      } else {
        // both reject it for the same reason: the first error is about the same element
        expect(ours.errors.length).toBeGreaterThan(0);
        expect(firstErrorElement(ours)).toBeDefined();
        expect(firstErrorElement(ours)).toBe(firstErrorElement(ref));
      }
    },
  );

  it('our schemas compile without warnings (no skipped import, no catalog needed)', () => {
    const first = validCases[0];
    if (first === undefined) throw new Error('empty corpus');
    const { ours } = verdictsFor(first.file);
    expect(ours.stderr).not.toMatch(/warning|failed to compile|Skipping import/i);
  });
});

describe.runIf(haveXmllint)('deliberate differences from the reference schemas', () => {
  afterAll(cleanupScratch);

  it('ItemConstraint content is not validated by our schema (the server checks it)', () => {
    expect(differenceCases.length).toBeGreaterThan(0);
    for (const { file } of differenceCases) {
      const { ref, ours } = verdictsFor(file);
      expect(ref.valid, `${label(file)}: reference`).toBe(false);
      expect(ref.errors.join('\n')).toContain('{http://www.w3.org/2001/XMLSchema}');
      expect(ours.valid, `${label(file)}: ours`).toBe(true);
    }
  });
});
