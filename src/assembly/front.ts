import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import { ConfigError } from '../engine/configuration/index.js';
import type { AddressInfo } from 'node:net';
import type { ServerConfig } from '../engine/configuration/index.js';

/**
 * The server's listeners: HTTP, and HTTPS with client certificates when WSAG_TLS_PORT is set.
 * What answers behind them can change while they listen: an instance of a cluster forwards
 * to the planning leader until it becomes the leader itself (src/assembly/cluster.ts).
 */
export class Front {
  private handler: http.RequestListener = (_req, res) => {
    res
      .writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' })
      .end('ServiceUnavailable: the server is starting\n');
  };

  private constructor(
    private readonly plain: http.Server,
    private readonly tls: https.Server | undefined,
  ) {}

  static async open(config: ServerConfig): Promise<Front> {
    let front: Front | undefined;
    const dispatch: http.RequestListener = (req, res) => (front as Front).handler(req, res);
    const plain = await listen(
      http.createServer({ connectionsCheckingInterval: 1000 }, dispatch),
      config.port,
      config.host,
      config.requestTimeoutSeconds,
      'PORT',
    );
    // Node does not verify client certificates (OpenSSL refuses RFC 3820 proxies by default):
    // every request's chain is validated by the trust store instead.
    const tls =
      config.tlsPort === undefined
        ? undefined
        : await listen(
            https.createServer(
              {
                cert: fs.readFileSync(config.tlsCertFile),
                key: fs.readFileSync(config.tlsKeyFile),
                ca: fs.readFileSync(config.caFile),
                requestCert: true,
                rejectUnauthorized: false,
                connectionsCheckingInterval: 1000,
              },
              dispatch,
            ),
            config.tlsPort,
            config.host,
            config.requestTimeoutSeconds,
            'WSAG_TLS_PORT',
          ).catch(async (error: unknown) => {
            await closeServer(plain);
            throw error;
          });
    front = new Front(plain, tls);
    return front;
  }

  /** What answers now. */
  get current(): http.RequestListener {
    return this.handler;
  }

  /** From now on `handler` answers every request. */
  serve(handler: http.RequestListener): void {
    this.handler = handler;
  }

  get url(): string {
    return `http://${hostOf(this.plain)}:${(this.plain.address() as AddressInfo).port}`;
  }

  get tlsUrl(): string | undefined {
    return this.tls && `https://${hostOf(this.tls)}:${(this.tls.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await Promise.all([this.plain, this.tls].map((s) => s && closeServer(s)));
  }
}

/** The listening address as answers name it: listening on every address (0.0.0.0, ::), this host's name. */
function hostOf(server: http.Server): string {
  const address = server.address() as AddressInfo;
  if (address.address === '0.0.0.0' || address.address === '::') return os.hostname();
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Listens; a port in use, forbidden or an address not on this host is a ConfigError naming the setting. */
function listen<S extends http.Server | https.Server>(
  server: S,
  port: number,
  host: string,
  requestTimeoutSeconds: number,
  setting: 'PORT' | 'WSAG_TLS_PORT',
): Promise<S> {
  // A client that sends its request slowly (or never ends it) is cut off, so stalled connections cannot pile up.
  server.requestTimeout = requestTimeoutSeconds * 1000;
  server.headersTimeout = Math.min(10_000, server.requestTimeout);
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port, setting)));
    server.listen(port, host, () => resolve(server));
  });
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number, setting: string): Error {
  const where = `cannot listen on ${host}:${port}`;
  if (error.code === 'EADDRINUSE')
    return new ConfigError(
      `${where}: the port is already in use (another wsag-server?): stop what uses it, or set ${setting} ` +
        `(wsag serve --port) to a free port`,
    );
  if (error.code === 'EACCES')
    return new ConfigError(
      `${where}: permission denied (ports below 1024 need privileges): set ${setting} to 1024 or above`,
    );
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
    return new ConfigError(
      `${where}: ${host} is not an address of this host: set HOST to one of its addresses, such as 127.0.0.1`,
    );
  return error;
}
