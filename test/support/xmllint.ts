import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from './server.js';

export const referenceDir = path.resolve(projectRoot, 'test/reference/ws-agreement');

/**
 * Validates documents against the official reference schemas with Debian's xmllint; returns xmllint's complaint per
 * failing document. Asynchronous: the tests' servers run in the same process, and a loop blocked for seconds of
 * xmllint runs lets their keep-alive timers close connections a client is about to reuse.
 */
export async function referenceValidationErrors(documents: Record<string, string>): Promise<Record<string, string>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-xmllint-'));
  const errors: Record<string, string> = {};
  for (const [name, xml] of Object.entries(documents)) {
    const file = path.join(dir, `${name.replace(/[^\w.-]/g, '_')}.xml`);
    fs.writeFileSync(file, xml);
    try {
      await promisify(execFile)(
        'xmllint',
        ['--nonet', '--noout', '--schema', path.join(referenceDir, 'all.xsd'), file],
        { env: { ...process.env, XML_CATALOG_FILES: path.join(referenceDir, 'catalog.xml') } },
      );
    } catch (error) {
      errors[name] = String((error as { stderr?: string }).stderr ?? error);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return errors;
}
