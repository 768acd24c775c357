// Summarises a --cpu-prof profile of a bench:nest app: self time by area and the top functions, per request.
// node bench/nest/profile-summary.mjs <file.cpuprofile> <requests served while profiling> [top N]
import { readFileSync } from 'node:fs';

const [file, requests = '1', top = '30'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
}
function area(url) {
  if (!url) return '(native, GC, idle)';
  const lib = /\.lib\/[^/]+\/esm\/([^/]+)\//.exec(url);
  if (lib) return `ours: ${lib[1]}/`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node: ' + url.slice(5).split('/')[0];
  return url;
}
const areas = new Map();
const functions = new Map();
for (const [id, us] of self) {
  const { callFrame } = byId.get(id);
  const a = callFrame.functionName === '(idle)' ? '(idle)' : area(callFrame.url);
  areas.set(a, (areas.get(a) ?? 0) + us);
  const name = `${callFrame.functionName || '(anonymous)'} ${callFrame.url.replace(/.*node_modules\//, '').replace(/.*\.lib\/[^/]+\/esm\//, 'ours/')}:${callFrame.lineNumber + 1}`;
  functions.set(name, (functions.get(name) ?? 0) + us);
}
const n = Number(requests);
const show = (map, count) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([k, us]) => `${(us / n).toFixed(1).padStart(8)} µs/req  ${k}`)
    .join('\n');
console.log(
  `self time per request (${n} requests):\n${show(areas, 40)}\n\ntop functions:\n${show(functions, Number(top))}`,
);
