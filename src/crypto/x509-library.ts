/**
 * The one place that loads @peculiar/x509. Its dependency injection container (tsyringe)
 * needs the Reflect metadata polyfill loaded first, so every module in wsag-server imports
 * the library from here, never from '@peculiar/x509' directly.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

// Node's WebCrypto signs and exports keys for the generator; set it explicitly rather than
// relying on a global `crypto` being present.
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };
