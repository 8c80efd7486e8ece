import https from 'node:https';

/** The client's TLS identity: its certificate (or proxy) chain, key, and the CAs it trusts for the server. */
export interface ClientTls {
  /** PEM: the client certificate, then its issuers (a proxy file holds proxy, key and user certificate). */
  cert: string;
  key: string;
  ca: string;
}

/**
 * A `fetch` for HTTPS with a client certificate: Node's global fetch cannot present one
 * without an extra dependency, and the client needs only POST/GET with text bodies.
 */
export function tlsFetch(tls: ClientTls): typeof fetch {
  const agent = new https.Agent({ cert: tls.cert, key: tls.key, ca: tls.ca });
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const headers = new Headers(init?.headers);
      const req = https.request(
        url,
        { method: init?.method ?? 'GET', agent, headers: Object.fromEntries(headers.entries()) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const responseHeaders = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
            }
            const status = res.statusCode ?? 500;
            const empty = [101, 204, 205, 304].includes(status);
            resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers: responseHeaders }));
          });
        },
      );
      req.on('error', reject);
      if (init?.signal) init.signal.addEventListener('abort', () => req.destroy(new Error('aborted')), { once: true });
      if (typeof init?.body === 'string') req.end(init.body);
      else req.end();
    });
}
