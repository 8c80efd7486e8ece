import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseXml } from '../../src/xml/libxml.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Golden wire fixtures: for each operation a request file is posted as-is and the response
 * must equal the stored one byte for byte (with the server URL written as BASE_URL). The
 * clock and ids are fixed, so any change on the wire shows up here. After an intended
 * change, regenerate with WSAG_UPDATE_GOLDEN=1 and review the diff.
 *
 * Fixtures run in file-name order against one server: 01-create makes agreement golden-1.
 */
const dir = path.join(import.meta.dirname, 'golden');
const update = process.env.WSAG_UPDATE_GOLDEN === '1';
let server: TestServer;

beforeAll(async () => {
  let n = 0;
  server = await startTestServer({
    clock: { now: () => new Date('2026-11-21T12:00:00Z') },
    ids: { next: () => `golden-${++n}` },
  });
});
afterAll(async () => server.close());

const requests = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.request.xml'))
  .sort();

describe('golden SOAP exchanges', () => {
  it('has a fixture for every operation', () => {
    expect(requests.length).toBeGreaterThanOrEqual(12);
  });

  for (const file of requests) {
    const name = file.replace('.request.xml', '');
    it(name, async () => {
      const raw = fs.readFileSync(path.join(dir, file), 'utf8');
      // First line: "POST /path" and optional "Content-Type: ..." / "SOAPAction: ..." lines, a blank line, then the body.
      const [head, body] = raw.split(/\n\n/, 2) as [string, string];
      const [requestLine, ...headerLines] = head.split('\n');
      const target = (requestLine as string).replace(/^POST /, '');
      const headers: Record<string, string> = { 'content-type': 'text/xml; charset=utf-8' };
      for (const line of headerLines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const response = await fetch(server.url + target, { method: 'POST', headers, body });
      const actual = `HTTP ${response.status}\nContent-Type: ${response.headers.get('content-type')}\n\n${(await response.text()).split(server.url).join('BASE_URL')}\n`;
      const goldenFile = path.join(dir, `${name}.response.xml`);
      if (update) fs.writeFileSync(goldenFile, actual);
      expect(fs.existsSync(goldenFile), `${goldenFile} is missing: run with WSAG_UPDATE_GOLDEN=1 and review it`).toBe(
        true,
      );
      expect(actual).toBe(fs.readFileSync(goldenFile, 'utf8'));
    });
  }

  it('every golden answer is well-formed XML, read by a parser that does not recover', () => {
    const answers = fs.readdirSync(dir).filter((f) => f.endsWith('.response.xml'));
    expect(answers.length).toBe(requests.length);
    for (const file of answers) {
      const body = fs
        .readFileSync(path.join(dir, file), 'utf8')
        .split('\n\n')
        .slice(1)
        .join('\n\n')
        .replaceAll('BASE_URL', 'http://127.0.0.1:8080');
      expect(() => parseXml(body, file).dispose(), file).not.toThrow();
    }
  });
});
