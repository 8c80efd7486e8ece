import { execFile } from 'node:child_process';

/**
 * Slurm's own command-line tools (sinfo, squeue, scontrol, sbatch, scancel), run with the
 * site's configuration (SLURM_CONF, else Slurm's default). We use the tools rather than
 * slurmrestd: every Slurm installation has them, they need no extra daemon or token, and
 * `sinfo --json` / `squeue --json` (Slurm 21.08 and later) give structured output where it
 * matters. A tool that fails is a SlurmCommandFailed naming the command and Slurm's words.
 */
export class SlurmCommandFailed extends Error {
  constructor(
    readonly command: string,
    readonly stderr: string,
    readonly exitCode: number | null,
  ) {
    super(
      `${command} failed${exitCode === null ? '' : ` (exit ${exitCode})`}: ` +
        `${stderr.trim().split('\n').slice(-3).join(' ') || 'no message'}`,
    );
    this.name = 'SlurmCommandFailed';
  }
}

export interface SlurmCliOptions {
  /** The slurm.conf to use; absent: Slurm's default (/etc/slurm/slurm.conf, or DNS SRV). */
  slurmConf?: string;
  /** Where the tools are; absent: on PATH. */
  binDir?: string;
  /** How long one command may take, ms. */
  timeoutMs?: number;
}

export class SlurmCli {
  constructor(private readonly options: SlurmCliOptions = {}) {}

  /** Runs `tool args...`; resolves to its standard output. */
  run(tool: string, args: readonly string[]): Promise<string> {
    const file = this.options.binDir ? `${this.options.binDir}/${tool}` : tool;
    // Times go to and come from Slurm in UTC (slurm-reservations.ts writes them so).
    const env = {
      ...process.env,
      TZ: 'UTC',
      ...(this.options.slurmConf ? { SLURM_CONF: this.options.slurmConf } : {}),
    };
    return new Promise((resolve, reject) => {
      execFile(
        file,
        [...args],
        { env, timeout: this.options.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          // Some tools (scontrol) print their refusal on standard output.
          if (error)
            reject(
              new SlurmCommandFailed(
                `${tool} ${args.join(' ')}`,
                stderr.trim() || stdout.trim() || error.message,
                typeof error.code === 'number' ? error.code : null,
              ),
            );
          else resolve(stdout);
        },
      );
    });
  }

  /** Runs a tool with --json and parses its answer. */
  async json<T>(tool: string, args: readonly string[]): Promise<T> {
    const out = await this.run(tool, [...args, '--json']);
    try {
      return JSON.parse(out) as T;
    } catch {
      throw new SlurmCommandFailed(
        `${tool} ${args.join(' ')} --json`,
        `answered something that is not JSON: ${out.slice(0, 200)}`,
        0,
      );
    }
  }
}

/**
 * `key=value key=value` as `scontrol show ... -o` prints one record per line (values may hold spaces only in the last
 * field).
 */
export function scontrolRecords(text: string): Array<Record<string, string>> {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^No \w+ in the system/.test(line))
    .map((line) => {
      const record: Record<string, string> = {};
      for (const m of line.matchAll(/(\w+(?:\/\w+)?)=(\S*)/g)) record[m[1] as string] = m[2] as string;
      return record;
    });
}
