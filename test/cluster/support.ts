import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/engine/configuration/config.js';
import { projectRoot } from '../support/server.js';

/** An instance of a cluster on the database at `url`: loopback, silent, the local user an operator, no run time. */
export function instanceConfig(url: string, clusterNodes: number) {
  return loadConfig(
    { WSAG_DATABASE_URL: url },
    {
      port: 0,
      host: '127.0.0.1',
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-instance-')),
      templatesDir: path.join(projectRoot, 'templates'),
      logLevel: 'silent',
      admins: ['anonymous'],
      clusterNodes,
      executor: 'none',
    },
  );
}

/** Where a reservation offer's window start or end is. */
export const windowLocation = (end: 'StartTime' | 'EndTime') =>
  `/wsag:AgreementOffer/wsag:Terms/wsag:All/wsag:ServiceDescriptionTerm[@wsag:Name='Window']/arp:AllocationTimeConstraint/arp:${end}`;
