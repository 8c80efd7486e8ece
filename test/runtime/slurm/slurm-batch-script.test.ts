import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { batchScript, quote, wrapperReadyFile } from '../../../src/runtime/slurm/slurm-batch-script.js';

const run = promisify(execFile);

/**
 * The batch script is run here by /bin/sh as Slurm would run it (SLURM_JOB_ID set), around
 * small programs: the application's arguments and environment arrive exactly as written,
 * the checkpoint signal reaches the application, and its exit code is left behind.
 */
describe('the Slurm batch script', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-batch-'));
  const script = (application: Parameters<typeof batchScript>[0]['application'], signal = 'USR1') => {
    const file = path.join(dir, `batch-${Math.random().toString(36).slice(2)}.sh`);
    fs.writeFileSync(
      file,
      batchScript({
        jobId: 'job-1',
        jobDirectory: dir,
        checkpointDirectory: path.join(dir, 'checkpoint'),
        nodes: ['n1'],
        application,
        checkpointSignal: signal,
        environment: { WSAG_JOB_ID: 'job-1', WSAG_CHECKPOINT_DIR: path.join(dir, 'checkpoint') },
      }),
      { mode: 0o700 },
    );
    return file;
  };

  it('passes arguments and environment exactly, whatever quotes and dollars they hold, and records the exit code', async () => {
    const printer = path.join(dir, 'print.sh');
    fs.writeFileSync(
      printer,
      '#!/bin/sh\nfor a in "$@"; do printf "[%s]\\n" "$a"; done\nprintf "{%s}{%s}{%s}\\n" "$GREETING" "$WSAG_JOB_ID" "$PWD"\nexit 3\n',
      { mode: 0o700 },
    );
    const file = script({
      executable: printer,
      arguments: ['plain', 'two words', "it's", '$HOME "x" `id`', ''],
      environment: [{ name: 'GREETING', value: 'a \'b\' "c" $d\nline' }],
      workingDirectory: dir,
      output: 'printed.txt',
    });
    await expect(run('/bin/sh', [file], { env: { SLURM_JOB_ID: '41' } })).rejects.toMatchObject({ code: 3 });
    expect(fs.readFileSync(path.join(dir, 'printed.txt'), 'utf8')).toBe(
      `[plain]\n[two words]\n[it's]\n[$HOME "x" \`id\`]\n[]\n{a 'b' "c" $d\nline}{job-1}{${dir}}\n`,
    );
    expect(fs.readFileSync(path.join(dir, 'exit-41'), 'utf8')).toBe('3\n');
  });

  it('hands the checkpoint signal to the application and waits for it to end', async () => {
    const app = path.join(dir, 'app.sh');
    fs.writeFileSync(
      app,
      `#!/bin/sh\ntrap 'echo signalled >> ${dir}/signals' USR2\ni=0; while [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done\nexit 0\n`,
      { mode: 0o700 },
    );
    const child = spawn('/bin/sh', [script({ executable: app, arguments: [], environment: [] }, 'USR2')], {
      env: { SLURM_JOB_ID: '42' },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGUSR2');
    const [code] = await new Promise<[number | null]>((resolve) => child.once('exit', (c) => resolve([c])));
    expect(code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'signals'), 'utf8')).toBe('signalled\n');
    expect(fs.readFileSync(path.join(dir, 'exit-42'), 'utf8')).toBe('0\n');
  });

  it('marks itself ready (ready-<Slurm job id>) once it passes the signal on', async () => {
    const text = batchScript({
      jobId: 'job-1',
      jobDirectory: dir,
      checkpointDirectory: dir,
      nodes: ['n1'],
      application: { executable: '/bin/true', arguments: [], environment: [] },
      checkpointSignal: 'USR2',
      environment: {},
    });
    const mark = text.indexOf(`: >${quote(`${dir}/ready-`)}"$SLURM_JOB_ID"`);
    expect(mark).toBeGreaterThan(text.indexOf("trap 'kill -USR2"));
    expect(mark).toBeGreaterThan(text.indexOf("trap 'kill -TERM"));
    const app = path.join(dir, 'ready-app.sh');
    // The application's own handler is its business (the contract: installed first thing); it says when it is in place.
    fs.writeFileSync(
      app,
      `#!/bin/sh\ntrap 'echo signalled >> ${dir}/ready-signals' USR2\n: > ${dir}/app-ready\ni=0; while [ $i -lt 10 ]; do sleep 0.05; i=$((i+1)); done\nexit 0\n`,
      { mode: 0o700 },
    );
    const child = spawn('/bin/sh', [script({ executable: app, arguments: [], environment: [] }, 'USR2')], {
      env: { SLURM_JOB_ID: '43' },
    });
    const ended = new Promise<number | null>((resolve) => child.once('exit', resolve));
    while (!fs.existsSync(wrapperReadyFile(dir, '43')) || !fs.existsSync(path.join(dir, 'app-ready')))
      await new Promise((resolve) => setTimeout(resolve, 5));
    child.kill('SIGUSR2');
    expect(await ended).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'ready-signals'), 'utf8')).toBe('signalled\n');
  });

  it('quotes any string as one shell word', async () => {
    for (const value of ['', 'a b', "'", "''\"$`\\", 'x\ny']) {
      const { stdout } = await run('/bin/sh', ['-c', `printf %s ${quote(value)}`]);
      expect(stdout).toBe(value);
    }
  });
});
