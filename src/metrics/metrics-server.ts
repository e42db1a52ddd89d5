import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetricsServer {
  /** `http://host:port`, as bound. */
  address: string;
  close(): Promise<void>;
}

/** What GET /health on the metrics listener answers: 200 when `status` is `ok`, else 503. */
export type HealthDetailSource = () => Promise<{ status: string }>;

/**
 * The Prometheus endpoint, on a listener of its own (METRICS_HOST:METRICS_PORT), so that it is
 * never exposed with the API nor counted in the API's own metrics. `GET /metrics` answers what
 * `render` gives; `GET /health` the health in detail (carriers, workers, last errors), which the
 * API's own /health keeps from strangers; anything else is 404.
 */
export async function serveMetrics(options: {
  host: string;
  port: number;
  contentType: string;
  render: () => Promise<string>;
  health: HealthDetailSource;
}): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
    const path = request.url?.split('?')[0];
    if (request.method === 'GET' && path === '/health') {
      answerHealth(response, options.health);
      return;
    }
    if (request.method !== 'GET' || path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Prometheus metrics are at GET /metrics, the health in detail at GET /health\n');
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

function answerHealth(response: http.ServerResponse, health: HealthDetailSource): void {
  health().then(
    (body) =>
      response
        .writeHead(body.status === 'ok' ? 200 : 503, { 'content-type': 'application/json; charset=utf-8' })
        .end(JSON.stringify(body)),
    (error: unknown) =>
      response
        .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
        .end(`health unavailable: ${(error as Error).message}\n`),
  );
}
