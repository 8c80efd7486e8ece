import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../support/server.js';
import { requireTool } from '../support/tools.js';

/**
 * docs/negotiation.md shows real exchanges: each code block after a
 * `<!-- golden: NAME -->` marker must be the golden fixture test/soap/golden/NAME.xml
 * (its body, formatted by xmllint). WSAG_UPDATE_GOLDEN=1 rewrites the blocks.
 */
const docFile = path.join(projectRoot, 'docs/negotiation.md');
const goldenDir = path.join(projectRoot, 'test/soap/golden');
const block = /<!-- golden: ([\w.-]+) -->\n```xml\n([\s\S]*?)\n```/g;
const hasXmllint = requireTool('xmllint');

function formatted(name: string): string {
  const raw = fs.readFileSync(path.join(goldenDir, `${name}.xml`), 'utf8');
  const body = raw.slice(raw.indexOf('\n\n') + 2);
  const xml = execFileSync('xmllint', ['--format', '--nonet', '-'], { input: body, encoding: 'utf8' });
  return xml.replace(/^<\?xml[^>]*\?>\n/, '').trimEnd();
}

describe('docs/negotiation.md', () => {
  it.skipIf(!hasXmllint)('shows the golden exchanges as they are on the wire', () => {
    const doc = fs.readFileSync(docFile, 'utf8');
    const names = [...doc.matchAll(block)].map((m) => m[1] as string);
    expect(names.length).toBeGreaterThanOrEqual(8);
    const current = doc.replace(
      block,
      (_all, name: string) => `<!-- golden: ${name} -->\n\`\`\`xml\n${formatted(name)}\n\`\`\``,
    );
    if (process.env.WSAG_UPDATE_GOLDEN === '1') fs.writeFileSync(docFile, current);
    else expect(doc, 'docs/negotiation.md is stale: run the tests with WSAG_UPDATE_GOLDEN=1').toBe(current);
  });
});
