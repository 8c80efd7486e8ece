import { lublinSwf } from '../../sim/index.js';
import type { Command } from '../command.js';
import type { Args } from '../context.js';
import { UsageError } from '../errors.js';

export const simTraceCommand: Command = {
  name: 'sim-trace',
  summary: "write a synthetic trace (Lublin and Feitelson's model) in the Standard Workload Format for wsag sim",
  synopsis: 'wsag sim-trace [--jobs N] [--nodes N] [--seed S]',
  description: [
    "Prints a trace of rigid parallel jobs drawn from Lublin and Feitelson's model (2003) with",
    'its published parameters (batch and interactive jobs, a daily arrival cycle, sizes and',
    'runtimes that depend on each other), and user estimates after Tsafrir, Etsion and',
    'Feitelson (2005), in the Standard Workload Format. wsag sim reads it as it reads the',
    "Parallel Workloads Archive's logs: the trace's MaxNodes is the cluster, its jobs become",
    'requests by the SWF rules, and --loads sets the offered load (docs/scheduler.md,',
    '"Generated traces"). The same options give the same trace.',
  ],
  optionHelp: [
    '  --jobs N           jobs in the trace (default 10000)',
    '  --nodes N          nodes of the machine, the largest job (default 128, what the model was fitted to)',
    '  --seed S           the random seed (default 1)',
  ],
  examples: [
    '  wsag sim-trace --jobs 1000 --nodes 64 > lublin.swf',
    '  wsag sim --workload lublin.swf --failure-rate 0.02 --failure-shape 0.7',
  ],
  options: { jobs: { type: 'string' }, nodes: { type: 'string' }, seed: { type: 'string' } },
  positionals: [],
  async run(args, ctx) {
    const text = lublinSwf({
      jobs: whole(args, 'jobs', 10_000, 1, 10_000_000),
      nodes: whole(args, 'nodes', 128, 1, 1_000_000),
      seed: whole(args, 'seed', 1, 0, 2 ** 32 - 1),
    });
    for (const line of text.trimEnd().split('\n')) ctx.out(line);
  },
};

function whole(args: Args, name: string, fallback: number, min: number, max: number): number {
  const text = args.string(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new UsageError(`--${name} expects a whole number from ${min} to ${max}, got "${text}"`);
  return value;
}
