import fs from 'node:fs/promises';
import path from 'node:path';
import type { ReportStore, StoredReport } from '../engine/execution/index.js';

/**
 * Post-runtime reports as files: `<dir>/<agreement id>.json` (the report) and `.txt` (the
 * same for people), each written to a temporary name and renamed, so a reader never sees
 * half a report. Agreement ids are URL-safe; they are encoded anyway.
 */
export class ReportFiles implements ReportStore {
  constructor(private readonly dir: string) {}

  async save(agreementId: string, stored: StoredReport): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    const base = this.base(agreementId);
    await writeWhole(`${base}.json`, `${JSON.stringify(stored.report, null, 2)}\n`);
    await writeWhole(`${base}.txt`, stored.text);
  }

  async read(agreementId: string): Promise<StoredReport | undefined> {
    const base = this.base(agreementId);
    try {
      const [json, text] = await Promise.all([fs.readFile(`${base}.json`, 'utf8'), fs.readFile(`${base}.txt`, 'utf8')]);
      return { report: JSON.parse(json) as StoredReport['report'], text };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  private base(agreementId: string): string {
    return path.join(this.dir, encodeURIComponent(agreementId));
  }
}

async function writeWhole(file: string, content: string): Promise<void> {
  await fs.writeFile(`${file}.tmp`, content);
  await fs.rename(`${file}.tmp`, file);
}
