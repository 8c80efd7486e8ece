import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A node:http server for `listener` on a free loopback port, with its URL and a close that ends open connections too. */
export async function serveOnLoopback(
  listener: http.RequestListener,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
