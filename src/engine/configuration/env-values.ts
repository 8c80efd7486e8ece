import { isIP } from 'node:net';
import { defaultFairUse, parseFairUse } from '../../domain/fair-use.js';
import { ConfigError } from './config-error.js';
import type { ServerConfig } from './server-config.js';

export function fairUse(text: string): string {
  const parsed = parseFairUse(text, defaultFairUse(1));
  if ('error' in parsed) throw new ConfigError(`WSAG_FAIR_USE: ${parsed.error}`);
  return text;
}

export function databaseUrl(url: string): string {
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new ConfigError(
      `WSAG_DATABASE_URL must be a PostgreSQL URL (postgres://user@host:port/database), got ` +
        `"${url.replace(/:[^:@/]*@/, ':***@')}"`,
    );
  return url;
}

export function choice<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

export function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function decimal(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(`${name} must be a decimal number such as 0.05, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function outboundAllow(text: string): ServerConfig['outboundAllow'] {
  const ranges = ['loopback', 'private', 'link-local'] as const;
  return text
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      if (!(ranges as readonly string[]).includes(r))
        throw new ConfigError(`WSAG_OUTBOUND_ALLOW: "${r}" is not a range; use ${ranges.join(', ')} (comma-separated)`);
      return r as (typeof ranges)[number];
    });
}

/** WSAG_TRUSTED_PROXIES: IP addresses and CIDR ranges, comma-separated; anything else is named. */
export function trustedProxyList(text: string): string[] {
  const entries = text
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const prefix = bits === undefined ? 0 : Number(bits);
    if (
      family === 0 ||
      extra !== undefined ||
      !Number.isInteger(prefix) ||
      prefix < 0 ||
      prefix > (family === 6 ? 128 : 32)
    )
      throw new ConfigError(
        `WSAG_TRUSTED_PROXIES: "${entry}" is not an IP address or a CIDR range (such as 10.0.0.5 or 10.0.0.0/24)`,
      );
  }
  return entries;
}
