// The thread behind WalCheckpointer (wal-checkpointer.ts): plain JavaScript, so that it runs
// alike from the TypeScript sources (tests) and from dist (the build copies it there).
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, intervalMs, restartFrames } = workerData;
const db = new Database(file, { fileMustExist: true });
// The checkpoint syncs the log before copying it and the database file after.
db.pragma('synchronous = NORMAL');

// Set while the connection finishes a checkpoint: a pass of ours would hold the checkpoint
// lock it needs.
let connectionFinishing = false;

const timer = setInterval(() => {
  if (connectionFinishing) return;
  try {
    // PASSIVE copies what it can without waiting for, or blocking, the server's writes.
    const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)');
    if (log < restartFrames) return;
    connectionFinishing = true;
    parentPort.postMessage({ log });
  } catch (error) {
    parentPort.postMessage({ error: String(error?.message ?? error) });
  }
}, intervalMs);

parentPort.on('message', (message) => {
  if (message === 'finished') connectionFinishing = false;
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
