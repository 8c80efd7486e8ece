import { describe, expect, it } from 'vitest';
import { withTable } from '../../bench/report.js';

describe('npm run bench -- --write', () => {
  const doc = [
    '# Benchmarks',
    '',
    '<!-- bench:scheduler -->',
    'old table',
    '<!-- /bench:scheduler -->',
    '',
    '## Next',
  ].join('\n');

  it("replaces the table between the bench's markers, leaving the rest as it was", () => {
    expect(withTable(doc, 'scheduler', '| new |\n')).toBe(
      ['# Benchmarks', '', '<!-- bench:scheduler -->', '| new |', '<!-- /bench:scheduler -->', '', '## Next'].join(
        '\n',
      ),
    );
  });

  it('refuses, naming the markers to add, where the document has no section for the bench', () => {
    expect(() => withTable(doc, 'signatures', 'x')).toThrow(
      'add <!-- bench:signatures --> and <!-- /bench:signatures -->',
    );
  });
});
