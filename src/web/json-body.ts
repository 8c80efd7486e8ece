import express, { type Request } from 'express';
import { MalformedMessage } from '../domain/errors.js';
import { declaredBodyWithin } from './error-boundary.js';

/** The middleware of a small JSON request body (at most 16 KiB), read as text so a wrong body is answered by name. */
export const smallBody = [declaredBodyWithin(16 * 1024), express.text({ type: () => true, limit: 16 * 1024 })];

/** The request body as a JSON object; a body that is not one is refused as malformed. */
export function jsonBody(req: Request): Record<string, unknown> {
  try {
    const value = JSON.parse(typeof req.body === 'string' ? req.body : '') as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new MalformedMessage('send a JSON object as the body');
}
