/** The command line itself is wrong (unknown option, missing argument): exit code 2, with the command's usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** An expected failure with a complete message for the user (no stack trace): exit code 1. */
export class CliError extends Error {
  override readonly name = 'CliError';
}

export const exitCodes = { ok: 0, failed: 1, usage: 2 } as const;
