import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoPki } from '../../src/crypto/demo-pki.js';
import { withChargeAccount } from '../../src/xml/offer-additions.js';
import { wsag } from '../cli/support.js';
import { at, deadlineOffer, simulatedServer, type SimulatedServer } from '../engine/run-time-support.js';
import { projectRoot } from '../support/server.js';
import { requireTool } from '../support/tools.js';

const available = requireTool('xmllint') && requireTool('xmlsec1');
const schema = path.resolve(projectRoot, 'test/reference/usage-record/urf.xsd');

/**
 * Usage records against tools nobody here wrote: every record the server emits
 * (a completed job, a terminated one, the CLI's export of all) validates against the OGF
 * Usage Record schema (GFD.98) with xmllint; the signed form verifies with xmlsec1 and the
 * CA file alone, and fails once a character changes.
 */
describe.runIf(available)('usage records', () => {
  let server: SimulatedServer;
  let dir: string;
  const ids: string[] = [];
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-usage-'));
    await createDemoPki({ dir: path.join(dir, 'pki'), keyType: 'rsa' }); // RSA here, ECDSA (the default) in signed-agreement.test.ts
    server = await simulatedServer({ nodes: 8, sqlite: true, dataDir: dir });
    await wsag(['account', 'create', 'astro', '--owner', 'anonymous', '--kind', 'vo', '--vo', 'astro'], {
      url: server.url,
    });
    await wsag(['account', 'allocate', 'astro', '1000'], { url: server.url });
    const charged = withChargeAccount(
      await deadlineOffer(server.client, { level: 'Standard', nodes: 2, deadline: at(20_000), name: 'pulsar-search' }),
      { account: 'astro', virtualOrganisation: 'astro' },
    );
    ids.push((await server.client.createAgreement(charged)).agreementId);
    ids.push(
      (
        await server.client.createAgreement(
          await deadlineOffer(server.client, { level: 'Legacy', nodes: 1, deadline: at(20_000) }),
        )
      ).agreementId,
    );
    await server.advanceTo(60);
    await server.client.terminate(ids[1] as string);
    await server.runUntilIdle();
  }, 60_000);
  afterAll(async () => server?.close());

  const xmllint = (file: string) =>
    execFileSync('xmllint', ['--nonet', '--noout', '--schema', schema, file], { stdio: 'pipe' });
  const record = async (id: string, signed = false) =>
    (await fetch(`${server.url}/api/usage/${id}${signed ? '?signed=1' : ''}`)).text();

  it('one record per ended agreement, valid GFD.98, saying who used what and what it cost', async () => {
    const listed = (await (await fetch(`${server.url}/api/usage`)).json()) as Array<{
      agreementId: string;
      signed: boolean;
    }>;
    expect(listed.map((r) => r.agreementId).sort()).toEqual([...ids].sort());
    expect(listed.every((r) => r.signed)).toBe(true);
    const completed = await record(ids[0] as string);
    fs.writeFileSync(path.join(dir, 'completed.xml'), completed);
    expect(() => xmllint(path.join(dir, 'completed.xml'))).not.toThrow();
    expect(completed).toContain('<ur:Status>completed</ur:Status>');
    expect(completed).toContain('<ur:NodeCount>2</ur:NodeCount>');
    expect(completed).toContain('<ur:Processors>32</ur:Processors>');
    expect(completed).toContain('<ur:GlobalUserName>anonymous</ur:GlobalUserName>');
    expect(completed).toContain('<ur:ProjectName>astro</ur:ProjectName>');
    expect(completed).toContain('<ur:JobName>pulsar-search</ur:JobName>');
    expect(completed).toMatch(/<ur:Charge ur:unit="EUR">\d+\.\d\d<\/ur:Charge>/);
    expect(completed).toMatch(/<ur:WallDuration>PT\d+S<\/ur:WallDuration>/);
    const aborted = await record(ids[1] as string);
    fs.writeFileSync(path.join(dir, 'aborted.xml'), aborted);
    expect(() => xmllint(path.join(dir, 'aborted.xml'))).not.toThrow();
    expect(aborted).toContain('<ur:Status>aborted</ur:Status>');
  });

  it('the CLI exports every record as one ur:UsageRecords document that validates', async () => {
    const file = path.join(dir, 'export.xml');
    const exported = await wsag(['usage', 'export', '--out', file], { url: server.url });
    expect(exported.code, exported.stderr).toBe(0);
    expect(() => xmllint(file)).not.toThrow();
    expect(fs.readFileSync(file, 'utf8').match(/<ur:JobUsageRecord /g)).toHaveLength(2);
  });

  it('the signed record verifies with xmlsec1 and the CA file alone; a changed character does not', async () => {
    const signed = await record(ids[0] as string, true);
    const file = path.join(dir, 'signed.xml');
    fs.writeFileSync(file, signed);
    const verify = (f: string) =>
      execFileSync(
        'xmlsec1',
        ['--verify', '--trusted-pem', path.join(dir, 'pki', 'ca.pem'), '--enabled-reference-uris', 'empty', f],
        { stdio: 'pipe' },
      );
    expect(() => verify(file)).not.toThrow();
    const changed = path.join(dir, 'changed.xml');
    fs.writeFileSync(changed, signed.replace('<ur:Status>completed</ur:Status>', '<ur:Status>completeD</ur:Status>'));
    expect(() => verify(changed)).toThrow();
    // The record inside the signed form is the record itself.
    expect(signed).toContain(await record(ids[0] as string));
  });
});
