import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WsagClient, type WsagFault } from '../../src/client/wsag-client.js';
import { offerFromTemplate } from '../../src/xml/offer-from-template.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { wsag } from './support.js';

/**
 * Every Item `wsag templates` lists can be set, a reservation's
 * StartTime, EndTime and Duration included, and a value an Item does not take is refused
 * in one plain sentence, the same for any wrong value; the server's schema faults reach
 * the user in plain words too.
 */
let server: TestServer;
let url = '';
beforeAll(async () => {
  server = await startTestServer({ config: { admins: ['anonymous'], clusterNodes: 16 } });
  url = server.url;
});
afterAll(async () => server?.close());

const create = (...sets: string[]) =>
  wsag(['create', '--template', 'advance-reservation', '--json', ...sets.flatMap((s) => ['--set', s])], { url });

describe('setting template Items', () => {
  it('a value an Item does not take is one plain sentence, whatever is wrong with it', async () => {
    for (const value of ['abc', '0', '65', '2.5']) {
      const result = await create(`NodeCount=${value}`);
      expect([result.code, result.err], value).toEqual([
        1,
        [`error: --set NodeCount must be a whole number from 1 to 16; got '${value}'`.replace('16', '64')],
      ]);
    }
    const level = await wsag(['create', '--template', 'deadline-job', '--set', 'GuaranteeLevel=Gold'], { url });
    expect(level.err).toEqual([
      "error: --set GuaranteeLevel must be one of Legacy, Standard, Enhanced, Full; got 'Gold'",
    ]);
    const start = await create('StartTime=tomorrow');
    expect(start.err).toEqual([
      "error: StartTime must be a date and time such as 2026-11-29T14:00:00Z; got 'tomorrow'",
    ]);
  });

  it("a reservation's StartTime, EndTime and Duration set its window; a new start keeps its length", async () => {
    const at = (hours: number) =>
      new Date(Math.ceil((Date.now() + hours * 3600_000) / 60_000) * 60_000).toISOString().replace(/\.000Z$/, 'Z');
    const window = async (...sets: string[]) => {
      const result = await create('NodeCount=1', ...sets);
      expect(result.err).toEqual([]);
      const { agreementId } = JSON.parse(result.stdout) as { agreementId: string };
      const window = (await server.repository.get(agreementId))?.request.window;
      return window && { start: window.start.toISOString(), end: window.end.toISOString() };
    };
    expect(await window(`StartTime=${at(10)}`, 'Duration=PT3H')).toEqual({
      start: new Date(at(10)).toISOString(),
      end: new Date(at(13)).toISOString(),
    });
    expect(await window(`StartTime=${at(20)}`, `EndTime=${at(21)}`)).toEqual({
      start: new Date(at(20)).toISOString(),
      end: new Date(at(21)).toISOString(),
    });
    // The shipped window is two hours long.
    expect(await window(`StartTime=${at(30)}`)).toEqual({
      start: new Date(at(30)).toISOString(),
      end: new Date(at(32)).toISOString(),
    });
    expect((await create(`StartTime=${at(40)}`, 'Duration=30')).err).toEqual([
      "error: Duration (seconds) must be a number from 60 to 604800; got '30'",
    ]);
  });

  it('wsag templates lists only what a value sets, in words, and the Location with --wide', async () => {
    const listed = await wsag(['templates'], { url });
    const reservation = listed.out.slice(
      listed.out.indexOf('advance-reservation  (TemplateId advance-reservation-v1)') + 1,
      listed.out.indexOf('', listed.out.indexOf('advance-reservation  (TemplateId advance-reservation-v1)')),
    );
    expect(reservation.map((line) => line.trim().split(/\s{2,}/)[0])).toEqual([
      'ITEM',
      'NodeCount',
      'GuaranteeLevel',
      'StartTime',
      'EndTime',
      'Duration',
    ]);
    expect(reservation.find((line) => line.trim().startsWith('NodeCount'))).toMatch(/a whole number from 1 to 64\s*$/);
    expect(Math.max(...listed.out.map((line) => line.length))).toBeLessThan(120);
    const wide = await wsag(['templates', '--wide'], { url });
    expect(wide.stdout).toContain('//sla:ServiceLevel/sla:GuaranteeLevel');
    expect(wide.stdout).toMatch(/Window\s+-\s+not set by a value \(sequence\)/);
    // Every Item listed can be set to the value shown.
    for (const line of reservation.slice(1)) {
      const [name, value] = line.trim().split(/\s{2,}/) as [string, string];
      if (value === '-' || value === '') continue;
      const result = await create('NodeCount=1', `${name}=${value}`);
      expect(result.err, `${name}=${value}`).toEqual([]);
    }
  });

  it("the server answers a wrong value in plain words, the schema validator's own in the fault's detail", async () => {
    const client = new WsagClient(url);
    const template = (await client.templates()).find((t) => t.includes('deadline-job-v1')) as string;
    const refusal = async (location: string, value: string) =>
      (await client.createAgreement(offerFromTemplate(template, [{ location, value }])).then(
        () => undefined,
        (e: unknown) => e,
      )) as WsagFault;
    const typed = await refusal('NodeCount', 'abc');
    expect(typed.message).toBe(
      "SchemaViolation: wsag:CreateAgreementInput violates the schema: jsdl:Exact 'abc' is not a number",
    );
    expect(typed.technicalDetail).toMatch(
      /Element '\{http:\/\/schemas\.ggf\.org\/jsdl\/2005\/11\/jsdl\}Exact': 'abc' is not a valid value of the atomic type 'xs:double'/,
    );
    const level = await refusal('GuaranteeLevel', 'Gold');
    expect(level.message).toMatch(
      /sla:GuaranteeLevel 'Gold' is not one of Background, Legacy, Standard, Enhanced, Full$/,
    );
    const tooMany = await refusal('NodeCount', '65');
    expect(tooMany.message).toBe('CreationConstraintViolation: Item NodeCount: 65 is more than 64, the most allowed');
    expect(tooMany.technicalDetail).toMatch(/^Item 'NodeCount' at .*: value "65" violates facet maxInclusive/);
  });
});
