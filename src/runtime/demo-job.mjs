// The demo job the local process resource manager runs when no command is configured.
// Plain JavaScript so it starts with bare `node`, without the TypeScript loader.
//
// It "computes" for WSAG_WORK_MS milliseconds (sleeping, or burning CPU when
// WSAG_DEMO_MODE=burn), resuming its progress from the checkpoint file WSAG_RESUME_FROM
// if given. Protocol with the resource manager, one JSON object per line:
//   stdin  {"type":"checkpoint"}                    -> stdout {"type":"checkpoint","progress":p}
//   stdout {"type":"started","progress":p} at start, {"type":"done"} before exiting 0.
// It exits when stdin closes (the resource manager is gone), so it never outlives it.
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const workMs = Math.max(1, Number(process.env.WSAG_WORK_MS ?? '1000'));
const burn = process.env.WSAG_DEMO_MODE === 'burn';
const jobDir = process.env.WSAG_JOB_DIR ?? '.';
const resumeFrom = process.env.WSAG_RESUME_FROM;

let progress = 0;
if (resumeFrom) {
  const saved = JSON.parse(readFileSync(resumeFrom, 'utf8'));
  progress = Math.min(1, Math.max(0, Number(saved?.job?.progress ?? 0)));
}

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function log(line) {
  appendFileSync(join(jobDir, 'demo-job.log'), `${new Date().toISOString()} ${line}\n`);
}

let last = Date.now();
function advance() {
  const now = Date.now();
  progress = Math.min(1, progress + (now - last) / workMs);
  last = now;
}

log(`start progress=${progress.toFixed(4)}${resumeFrom ? ` resumed-from=${resumeFrom}` : ''}`);
send({ type: 'started', progress });

const timer = setInterval(() => {
  if (burn) {
    const until = Date.now() + 8;
    while (Date.now() < until) {
      // burn CPU time, as a real job would
    }
  }
  advance();
  if (progress >= 1) {
    clearInterval(timer);
    log('done');
    send({ type: 'done' });
    process.exit(0);
  }
}, 10);

const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message?.type === 'checkpoint') {
    advance();
    log(`checkpoint progress=${progress.toFixed(4)}`);
    send({ type: 'checkpoint', progress });
  }
});
input.on('close', () => process.exit(1));
