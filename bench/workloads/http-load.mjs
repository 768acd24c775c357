// Workload 4, client side: `connections` keep-alive connections issuing GETs back to back for
// `seconds`, each request on a fresh id → requests/s and latency p99.
import http from 'node:http';
import { nowMs } from '../lib/clock.mjs';
import { quantile } from '../lib/stats.mjs';

function get(agent, port, path) {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path, agent }, (response) => {
      response.resume();
      response.on('end', () =>
        response.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${response.statusCode} for ${path}`)),
      );
    });
    request.on('error', reject);
  });
}

/** `serverCpu` (optional): `{ start(), stop() }` around the timed part, `stop()` resolving the server's CPU µs. */
export async function httpLoad({ port, route, seconds, connections = 32, serverCpu }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let next = 0;
  for (let i = 0; i < 200; i++) await get(agent, port, `/items/${route}/warm${i}`);
  const latencies = [];
  serverCpu?.start();
  const startedAt = nowMs();
  const until = startedAt + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (nowMs() < until) {
        const sent = nowMs();
        await get(agent, port, `/items/${route}/${next++}`);
        latencies.push(nowMs() - sent);
      }
    }),
  );
  const elapsed = (nowMs() - startedAt) / 1000;
  const cpuUs = await serverCpu?.stop();
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const result = {
    requests: latencies.length,
    requestsPerSec: latencies.length / elapsed,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
  };
  // CPU the server spent per request: less sensitive than throughput to what else runs on the machine.
  return cpuUs === undefined ? result : { ...result, serverCpuUsPerRequest: cpuUs / latencies.length };
}
