/** Fills a data directory's SQLite store for the benchmarks that need many stored agreements. */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Agreement } from '../src/domain/agreement.js';
import { agreementNote } from '../src/engine/audit/audit-notes.js';
import { SqliteAgreementRepository } from '../src/store/sqlite-agreement-repository.js';
import { SqliteConnection } from '../src/store/sqlite-connection.js';

/** Stops a server process started with startProcess and waits for it to exit (its store is then free). */
export async function stopProcess(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * Writes `count` copies of the stored agreement `modelId`, each made by `clone(model, i)`,
 * straight into the data directory's store (the server stopped), with an audit entry each,
 * as the server stores every agreement; 5,000 to a transaction.
 */
export async function storeClones(
  dataDir: string,
  modelId: string,
  count: number,
  clone: (model: Agreement, i: number) => Agreement,
): Promise<void> {
  const connection = SqliteConnection.open(path.join(dataDir, 'wsag.db'));
  try {
    const repository = new SqliteAgreementRepository(connection);
    const model = await repository.get(modelId);
    if (!model) throw new Error(`no stored agreement ${modelId} to clone`);
    for (let from = 0; from < count; from += 5000) {
      // Each insert writes at once (inside this transaction) and then waits for the log to be synced.
      const inserted: Array<Promise<void>> = [];
      connection.db.transaction(() => {
        for (let i = from; i < Math.min(count, from + 5000); i++) {
          const agreement = clone(model, i);
          inserted.push(
            repository.insert(agreement, [agreementNote({ actor: 'anonymous', action: 'created', after: agreement })]),
          );
        }
      })();
      await Promise.all(inserted);
      // Those syncs may have started before the transaction committed: one more after it.
      await connection.durable();
    }
  } finally {
    connection.close();
  }
}
