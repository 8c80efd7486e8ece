/**
 * The server's own elements (schemas/wsag-server.xsd, namespace srv) as seen through our
 * schemas/all.xsd: what the server writes passes, malformed values are rejected naming the
 * element. Checked with xmllint and with libxml2-wasm, as the server validates.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SchemaViolation } from '../../src/domain/errors.js';
import { SchemaSet } from '../../src/xml/schema-set.js';
import { withXml } from '../../src/xml/libxml.js';
import { requireTool } from '../support/tools.js';
import { NS, type Verdict, cleanupScratch, firstErrorElement, validateAllWithOurs } from './helpers.js';

const haveXmllint = requireTool('xmllint');
const srv = (xml: string): string => xml.replace(/^<srv:(\w+)/, `<srv:$1 xmlns:srv="${NS.srv}" xmlns:wsa="${NS.wsa}"`);

interface SrvCase {
  name: string;
  xml: string;
  /** local name of the srv element the first error names; undefined for valid documents */
  rejects?: string;
}

const VALID: SrvCase[] = [
  {
    name: 'AgreementId as a SOAP header (wsa:IsReferenceParameter)',
    xml: srv('<srv:AgreementId wsa:IsReferenceParameter="true">a-1</srv:AgreementId>'),
  },
  { name: 'NegotiationId', xml: srv('<srv:NegotiationId>n-1</srv:NegotiationId>') },
  { name: 'Reason', xml: srv('<srv:Reason>no longer needed</srv:Reason>') },
  { name: 'Note', xml: srv('<srv:Note>slot tomorrow 08:00</srv:Note>') },
  {
    name: 'Quote with price and fee',
    xml: srv(
      '<srv:Quote><srv:Price Currency="EUR">12.50</srv:Price><srv:PreparatoryFee Currency="EUR">0.63</srv:PreparatoryFee></srv:Quote>',
    ),
  },
  { name: 'Quote with a price only', xml: srv('<srv:Quote><srv:Price Currency="USD">0</srv:Price></srv:Quote>') },
  {
    name: 'Hold, expired and charged',
    xml: srv(
      '<srv:Hold><srv:State>Expired</srv:State><srv:ExpiresAt>2026-11-21T12:30:00Z</srv:ExpiresAt><srv:Fee Currency="EUR">0.63</srv:Fee>' +
        '<srv:Charged Currency="EUR">0.63</srv:Charged><srv:EndedAt>2026-11-21T12:30:00Z</srv:EndedAt></srv:Hold>',
    ),
  },
  {
    name: 'ChosenAlternative',
    xml: srv(
      '<srv:ChosenAlternative Index="2" Count="3"><srv:Term>Job</srv:Term><srv:Term>Window</srv:Term></srv:ChosenAlternative>',
    ),
  },
  {
    name: 'AcceptedOffer',
    xml: srv(
      '<srv:AcceptedOffer><srv:NegotiationId>n-1</srv:NegotiationId><srv:OfferId>o-2</srv:OfferId></srv:AcceptedOffer>',
    ),
  },
  {
    name: 'AcceptedOffer without the negotiation',
    xml: srv('<srv:AcceptedOffer><srv:OfferId>o-2</srv:OfferId></srv:AcceptedOffer>'),
  },
];

const INVALID: SrvCase[] = [
  { name: 'an empty AgreementId', rejects: 'AgreementId', xml: srv('<srv:AgreementId> </srv:AgreementId>') },
  {
    name: 'a currency that is no ISO 4217 code',
    rejects: 'Price',
    xml: srv('<srv:Quote><srv:Price Currency="euro">1</srv:Price></srv:Quote>'),
  },
  {
    name: 'a negative price',
    rejects: 'Price',
    xml: srv('<srv:Quote><srv:Price Currency="EUR">-1</srv:Price></srv:Quote>'),
  },
  { name: 'a price without currency', rejects: 'Price', xml: srv('<srv:Quote><srv:Price>1</srv:Price></srv:Quote>') },
  {
    name: 'an unknown hold state',
    rejects: 'State',
    xml: srv(
      '<srv:Hold><srv:State>Pending</srv:State><srv:ExpiresAt>2026-11-21T12:30:00Z</srv:ExpiresAt><srv:Fee Currency="EUR">1</srv:Fee></srv:Hold>',
    ),
  },
  {
    name: 'a hold without fee',
    rejects: 'Hold',
    xml: srv('<srv:Hold><srv:State>Held</srv:State><srv:ExpiresAt>2026-11-21T12:30:00Z</srv:ExpiresAt></srv:Hold>'),
  },
  {
    name: 'alternative index 0',
    rejects: 'ChosenAlternative',
    xml: srv('<srv:ChosenAlternative Index="0" Count="3"/>'),
  },
  {
    name: 'an accepted offer without OfferId',
    rejects: 'AcceptedOffer',
    xml: srv('<srv:AcceptedOffer><srv:NegotiationId>n-1</srv:NegotiationId></srv:AcceptedOffer>'),
  },
];

let dir: string | undefined;
let verdicts: Map<string, Verdict> | undefined;
const fileOf = new Map<SrvCase, string>();

function verdict(c: SrvCase): Verdict {
  if (verdicts === undefined) {
    dir = mkdtempSync(join(tmpdir(), 'wsag-srv-'));
    [...VALID, ...INVALID].forEach((k, i) => {
      const file = join(dir as string, `srv-${String(i).padStart(2, '0')}.xml`);
      writeFileSync(file, k.xml);
      fileOf.set(k, file);
    });
    verdicts = validateAllWithOurs([...fileOf.values()]);
  }
  const v = verdicts.get(fileOf.get(c) ?? '');
  if (v === undefined) throw new Error(`no verdict for ${c.name}`);
  return v;
}

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  cleanupScratch();
});

if (!haveXmllint) {
  it.skip('xmllint is not on PATH and WSAG_SKIP_INTEROP=1: srv validation with xmllint skipped', () => {});
}

describe.runIf(haveXmllint)('srv: elements validated by schemas/all.xsd (xmllint)', () => {
  it.each(VALID)('accepts $name', (c) => {
    expect(verdict(c).errors).toEqual([]);
  });

  it.each(INVALID)('rejects $name, naming srv:$rejects', (c) => {
    const v = verdict(c);
    expect(v.valid).toBe(false);
    expect(firstErrorElement(v)).toBe(`{${NS.srv}}${c.rejects ?? '?'}`);
  });
});

describe('srv: elements validated by the server (libxml2-wasm)', () => {
  const problem = (xml: string): string | undefined => {
    try {
      withXml(xml, 'srv element', (doc) => SchemaSet.get().validate(doc, 'srv element'));
      return undefined;
    } catch (error) {
      // The validator's own words (the fault's detail); the message says the same with prefixes.
      return (error as SchemaViolation).technicalDetail ?? (error as Error).message;
    }
  };
  it.each(VALID)('accepts $name', (c) => expect(problem(c.xml)).toBeUndefined());
  it.each(INVALID)('rejects $name, naming srv:$rejects', (c) =>
    expect(problem(c.xml)).toContain(`{${NS.srv}}${c.rejects ?? '?'}'`),
  );
});
