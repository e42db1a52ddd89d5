import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetricsServer {
  /** `http://host:port`, as bound. */
  address: string;
  close(): Promise<void>;
}

/**
 * The Prometheus endpoint, on a listener of its own (METRICS_HOST:METRICS_PORT), so that it is
 * never exposed with the API nor counted in the API's own metrics. `GET /metrics` answers what
 * `render` gives; anything else is 404.
 */
export async function serveMetrics(options: {
  host: string;
  port: number;
  contentType: string;
  render: () => Promise<string>;
}): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Prometheus metrics are at GET /metrics\n');
      return;
    }
    options.render().then(
      (text) => response.writeHead(200, { 'content-type': options.contentType }).end(text),
      (error: unknown) =>
        response
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`metrics unavailable: ${(error as Error).message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port, family } = server.address() as AddressInfo;
  return {
    address: `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
