// What a bench:nest request allocates on the JS heap, by function: one profile written with
// `--alloc-profile dir`, or the difference between two (A - B), in bytes per request.
//   node bench/nest/alloc-summary.mjs <A.json> [<B.json>] [--top N]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' } },
});
if (positionals.length < 1 || positionals.length > 2)
  throw new Error('usage: node bench/nest/alloc-summary.mjs <A.json> [<B.json>] [--top N]');

/** Bytes per request by function (name, file, line), and the total, of one profile file. */
function perRequest(file) {
  const { contender, requests, profile } = JSON.parse(readFileSync(file, 'utf8'));
  const bySite = new Map();
  let total = 0;
  const walk = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    if (node.selfSize > 0) {
      const site = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|esm)\//, '$1/')}:${lineNumber + 1}`;
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize / requests);
      total += node.selfSize / requests;
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return { contender, requests, bySite, total };
}

const a = perRequest(positionals[0]);
const b = positionals[1] ? perRequest(positionals[1]) : undefined;
const kb = (bytes) => (bytes / 1024).toFixed(1);
console.log(`${a.contender}: ${kb(a.total)} KB per request (${a.requests} requests sampled)`);
if (b)
  console.log(
    `${b.contender}: ${kb(b.total)} KB per request (${b.requests} requests sampled); A - B: ${kb(a.total - b.total)} KB`,
  );
const sites = new Set([...a.bySite.keys(), ...(b?.bySite.keys() ?? [])]);
const rows = [...sites].map((site) => ({ site, a: a.bySite.get(site) ?? 0, b: b?.bySite.get(site) ?? 0 }));
rows.sort((x, y) => Math.abs(y.a - y.b) - Math.abs(x.a - x.b));
console.log(b ? '   A - B        A        B  bytes per request, function' : '       A  bytes per request, function');
for (const { site, a: x, b: y } of rows.slice(0, Number(values.top))) {
  console.log(
    b
      ? `${(x - y).toFixed(0).padStart(8)} ${x.toFixed(0).padStart(8)} ${y.toFixed(0).padStart(8)}  ${site}`
      : `${x.toFixed(0).padStart(8)}  ${site}`,
  );
}
