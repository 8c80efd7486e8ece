import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { Agreement } from '../domain/agreement.js';
import {
  InvalidStateTransition,
  MalformedMessage,
  MessageTooLarge,
  NotAuthorized,
  UnknownResource,
} from '../domain/errors.js';
import { mayActOn, type Caller } from '../domain/identity.js';
import { sendProblem } from './problem.js';

/**
 * Receiving a migrated job's checkpoint (Hovestadt 2006, section 3.6.7: "the latest checkpoint
 * dataset is transferred to the remote system and then restarted"). The contract the
 * migrating provider's client follows (src/client/peer-providers.ts):
 *
 *   PUT /api/agreements/{id}/checkpoint
 *   Content-Type: application/octet-stream
 *   x-checkpoint-sha256: <sha256 of the body, hex>
 *   <the checkpoint's bytes>
 *
 * answered 204 once stored. Only a party that may act on the agreement (its initiator, the
 * parties it named eligible, operators) may upload, only while the agreement is Observed,
 * and only to an agreement whose offer said a checkpoint comes (sla:ResumesFromCheckpoint, a
 * migrated job). The body is streamed to a temporary file, never held in memory, and
 * refused (413) past the size the offer declared or `maxBytes`, whichever is smaller, or
 * (429) past the uploader's fair use; a body whose digest differs is refused (400) and not
 * stored.
 * Errors are JSON `{ error, message }`, like the other /api views.
 */

export interface CheckpointUpload {
  agreementId: string;
  /** Identity of the uploader. */
  uploader: string;
  /**
   * The received checkpoint in a temporary file: the store moves or copies it; whatever is left there is deleted
   * afterwards.
   */
  file: string;
  sizeBytes: number;
  sha256: string;
}

export interface CheckpointUploadOptions {
  /** Who sent the request; throws NotAuthenticated. */
  identify: (req: Request) => Caller;
  /** The agreement the checkpoint is for, or undefined when there is none. */
  agreement: (
    id: string,
  ) => Promise<Pick<Agreement, 'initiator' | 'eligibleParties' | 'state' | 'request'> | undefined>;
  /** Fair use: throws FairUseExceeded when the caller may not keep `bytes` more of checkpoints for the agreement. */
  checkFairUse?: (caller: Caller, agreementId: string, bytes: number) => void;
  /** Keeps the checkpoint (and tells the run time a job resumes from it there). */
  store: (upload: CheckpointUpload) => Promise<void>;
  /** Largest checkpoint accepted, bytes. */
  maxBytes: number;
  /** Where bodies are received before they are checked (default: the OS temporary directory). */
  tempDir?: string;
  logger?: Logger;
}

/** The header carrying the body's sha256 (hex); the same name as src/client/peer-providers.ts sends. */
const digestHeader = 'x-checkpoint-sha256';

/** The router serving PUT /api/agreements/:id/checkpoint; mount it at the application's root. */
export function checkpointUploadRouter(options: CheckpointUploadOptions): Router {
  const router = express.Router();
  router.put('/api/agreements/:id/checkpoint', (req, res) => {
    void receive(req, res, options);
  });
  return router;
}

async function receive(req: Request, res: Response, options: CheckpointUploadOptions): Promise<void> {
  const agreementId = String(req.params.id);
  let file: string | undefined;
  try {
    const caller = options.identify(req);
    const agreement = await options.agreement(agreementId);
    if (!agreement) throw new UnknownResource(`no agreement "${agreementId}"`);
    if (!mayActOn(caller, agreement))
      throw new NotAuthorized(
        `agreement "${agreementId}" belongs to ${agreement.initiator}: only its initiator may send its checkpoint`,
      );
    if (agreement.state !== 'Observed')
      throw new InvalidStateTransition(
        `agreement "${agreementId}" is ${agreement.state}: a checkpoint is taken only while it is Observed`,
      );
    const promised = agreement.request.resumesFromCheckpointBytes;
    if (promised === undefined)
      throw new NotAuthorized(
        `agreement "${agreementId}" takes no checkpoint: only a migrated job, whose offer declares ` +
          `sla:ResumesFromCheckpoint, resumes from one`,
      );
    const expected = req.get(digestHeader)?.trim().toLowerCase();
    if (!expected || !/^[0-9a-f]{64}$/.test(expected))
      throw new MalformedMessage(`the ${digestHeader} header must carry the checkpoint's sha256 in hex`);
    const maxBytes = Math.min(options.maxBytes, promised);
    const declared = req.get('content-length');
    if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge(Number(declared), maxBytes);
    options.checkFairUse?.(caller, agreementId, declared !== undefined ? Number(declared) : maxBytes);
    file = path.join(options.tempDir ?? os.tmpdir(), `checkpoint-${randomUUID()}.part`);
    const { sizeBytes, sha256 } = await saveBody(req, file, maxBytes);
    if (sha256 !== expected)
      throw new MalformedMessage(
        `the checkpoint's sha256 is ${sha256}, not ${expected} as ${digestHeader} says: it was damaged on the way`,
      );
    // Another upload may have been kept while this one arrived.
    options.checkFairUse?.(caller, agreementId, sizeBytes);
    await options.store({ agreementId, uploader: caller.identity, file, sizeBytes, sha256 });
    res.status(204).end();
  } catch (error) {
    // The connection ends with the answer; what is left of the body is dropped, not read.
    res.set('connection', 'close');
    req.resume();
    sendProblem(res, error, `receiving the checkpoint of agreement ${agreementId}`, options.logger);
  } finally {
    if (file) await fs.promises.rm(file, { force: true });
  }
}

/** Streams the body to `file`, counting and hashing; fails past `maxBytes`. */
async function saveBody(req: Request, file: string, maxBytes: number): Promise<{ sizeBytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sizeBytes += chunk.length;
      if (sizeBytes > maxBytes) return done(tooLarge(sizeBytes, maxBytes));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(req, meter, fs.createWriteStream(file, { flags: 'wx' }));
  return { sizeBytes, sha256: hash.digest('hex') };
}

function tooLarge(size: number, maxBytes: number): MessageTooLarge {
  return new MessageTooLarge(
    `the checkpoint is larger than the ${maxBytes} bytes this server accepts for it (the smaller of the size ` +
      `its offer declared and the server's maximum; at least ${size} bytes)`,
  );
}

/** Where checkpoints received from peers (migrated jobs) are kept, below the site's checkpoint directory. */
export function receivedDirOf(checkpointDir: string): string {
  return path.join(checkpointDir, 'received');
}

/** Where fileCheckpointStore keeps an agreement's latest checkpoint. */
export function checkpointFileOf(dir: string, agreementId: string): string {
  return path.join(dir, `${encodeURIComponent(agreementId)}.checkpoint`);
}

/**
 * A store keeping each agreement's latest checkpoint as `{dir}/{agreementId}.checkpoint`
 * (the received file moved there, replacing an older one in one step).
 */
export function fileCheckpointStore(dir: string): (upload: CheckpointUpload) => Promise<void> {
  return async (upload) => {
    await fs.promises.mkdir(dir, { recursive: true });
    const target = checkpointFileOf(dir, upload.agreementId);
    try {
      await fs.promises.rename(upload.file, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      // Another filesystem: copy next to the target, then replace it in one step.
      await fs.promises.copyFile(upload.file, `${target}.part`);
      await fs.promises.rename(`${target}.part`, target);
    }
  };
}
