// Workload 4, client side: `connections` keep-alive connections issuing GETs back to back for
// `seconds`, each request on a fresh id → requests/s and latency p99.
import http from 'node:http';
import { nowMs } from '../lib/clock.mjs';
import { quantile } from '../lib/stats.mjs';

function get(agent, port, path) {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path, agent }, (response) => {
      response.resume();
      response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${response.statusCode} for ${path}`))));
    });
    request.on('error', reject);
  });
}

export async function httpLoad({ port, route, seconds, connections = 32 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let next = 0;
  for (let i = 0; i < 200; i++) await get(agent, port, `/items/${route}/warm${i}`);
  const latencies = [];
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
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, requestsPerSec: latencies.length / elapsed, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99) };
}
