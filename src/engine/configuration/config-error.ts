import fs from 'node:fs';

/** A setting (environment variable, or a file it names) the server cannot start with: the message names it. */
export class ConfigError extends Error {}

/** A JSON configuration file, read and parsed; `where` names it in the error. */
export function readJsonFile(file: string, where: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`${where} cannot be read: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ConfigError(`${where} is not valid JSON: ${(error as Error).message}`);
  }
}
