/**
 * The admin page: one HTML document with its style and script inline (no build step, nothing
 * fetched from elsewhere), allowed by a Content-Security-Policy nonce. Everything from the store
 * (keys, instances, labels) is put in the page with `textContent`, never as HTML.
 */
export function adminPageHtml(settings: { basePath: string; store: string; releaseEnabled: boolean; nonce: string }): string {
  const config = JSON.stringify({ base: settings.basePath, store: settings.store, releaseEnabled: settings.releaseEnabled }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Locks</title>
<style nonce="${settings.nonce}">${STYLE}</style>
</head>
<body>
<header>
  <h1>Locks <small id="store"></small></h1>
  <label>Key prefix <input id="prefix" type="search" placeholder="all keys" autocomplete="off"></label>
  <span id="live" class="status">connecting…</span>
</header>
<main>
  <section>
    <table id="locks">
      <thead><tr><th>Key</th><th>Mode</th><th>Holder</th><th>Label</th><th>Fence</th><th>Lease left</th><th>Waiting</th><th></th></tr></thead>
      <tbody></tbody>
    </table>
    <p id="empty" hidden>No lock is held.</p>
    <p id="more" hidden>More locks than shown: narrow the prefix.</p>
    <p id="message" role="status"></p>
  </section>
  <aside>
    <h2>Events <small>(this instance)</small></h2>
    <ol id="events"></ol>
  </aside>
</main>
<script nonce="${settings.nonce}">const CONFIG = ${config};
${SCRIPT}</script>
</body>
</html>
`;
}

const STYLE = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
body { margin: 0; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .75rem 1.25rem; background: #1d2330; color: #fff; }
header h1 { font-size: 1.2rem; margin: 0; } header small { color: #9aa4b8; font-weight: normal; }
header input { margin-left: .4rem; padding: .25rem .4rem; border-radius: 4px; border: 0; width: 14rem; }
.status { margin-left: auto; font-size: .85rem; } .status.live { color: #7ee2a8; } .status.down { color: #ff9b8f; }
main { display: grid; grid-template-columns: 1fr 22rem; gap: 1.25rem; padding: 1.25rem; }
table { border-collapse: collapse; width: 100%; background: #fff; box-shadow: 0 1px 2px #0002; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid #e5e8ee; vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; color: #5b6478; }
td.key { font-family: ui-monospace, monospace; word-break: break-all; } td.num { font-variant-numeric: tabular-nums; }
td.lease.low { color: #c0392b; font-weight: 600; }
button { border: 1px solid #c0392b; color: #c0392b; background: #fff; border-radius: 4px; padding: .2rem .6rem; cursor: pointer; }
button:disabled { border-color: #ccc; color: #999; cursor: not-allowed; }
aside { background: #fff; box-shadow: 0 1px 2px #0002; padding: .5rem 1rem; max-height: 80vh; overflow: auto; }
aside h2 { font-size: 1rem; } aside ol { list-style: none; padding: 0; margin: 0; font-size: .85rem; }
aside li { padding: .3rem 0; border-bottom: 1px solid #eee; } aside .type { font-weight: 600; margin-right: .4rem; }
#message { min-height: 1.4em; } #message.error { color: #c0392b; }
`;

const SCRIPT = `
const tbody = document.querySelector('#locks tbody');
const prefixInput = document.getElementById('prefix');
const message = document.getElementById('message');
document.getElementById('store').textContent = CONFIG.store;
let rows = [];
let refreshTimer;

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function say(text, isError) {
  message.textContent = text;
  message.className = isError ? 'error' : '';
}

async function refresh() {
  const query = new URLSearchParams({ prefix: prefixInput.value, limit: '200' });
  try {
    const response = await fetch(CONFIG.base + '/api/locks?' + query, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(response.status + ' ' + (await response.text()));
    const page = await response.json();
    render(page.locks, page.cursor !== undefined);
  } catch (error) {
    say('Could not list the locks: ' + error.message, true);
  }
}

function render(locks, more) {
  const now = performance.now();
  rows = [];
  tbody.replaceChildren();
  for (const lock of locks) {
    const holders = lock.holders.length ? lock.holders : [{}];
    holders.forEach((holder, index) => {
      const tr = document.createElement('tr');
      tr.dataset.key = lock.key;
      tr.append(
        cell(index === 0 ? lock.key : '', 'key'),
        cell(holder.permit ? 'permit' : lock.mode || '-'),
        cell(holder.instance || '-'),
        cell(holder.label || ''),
        cell(holder.fence === undefined ? '-' : String(holder.fence), 'num'),
        cell('', 'lease num'),
        cell(lock.waiting === undefined ? '-' : String(lock.waiting), 'num'),
      );
      const actions = document.createElement('td');
      if (index === 0) {
        const button = document.createElement('button');
        button.textContent = 'Release';
        button.disabled = !CONFIG.releaseEnabled;
        button.title = CONFIG.releaseEnabled ? 'Force-release this lock' : 'Release is off: register the admin module with guards';
        button.addEventListener('click', () => release(lock.key));
        actions.append(button);
      }
      tr.append(actions);
      tbody.append(tr);
      rows.push({ lease: tr.children[5], deadline: holder.expiresInMs === undefined ? undefined : now + holder.expiresInMs });
    });
  }
  document.getElementById('empty').hidden = locks.length > 0;
  document.getElementById('more').hidden = !more;
  tick();
}

function tick() {
  const now = performance.now();
  for (const row of rows) {
    if (row.deadline === undefined) { row.lease.textContent = 'session'; continue; }
    const left = Math.max(0, row.deadline - now);
    row.lease.textContent = (left / 1000).toFixed(1) + ' s';
    row.lease.classList.toggle('low', left < 2000);
  }
}

async function release(key) {
  const reason = window.prompt('Force-release "' + key + '"? Its holder loses it at its next renewal. Reason:', '');
  if (reason === null) return;
  try {
    const response = await fetch(CONFIG.base + '/api/release', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ key, reason: reason || undefined }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) say('Release refused (' + response.status + '): ' + (body.message || response.statusText), true);
    else say(body.released ? 'Released ' + key : key + ' was not held');
  } catch (error) {
    say('Release failed: ' + error.message, true);
  }
  refresh();
}

function scheduleRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 150);
}

function showEvent(event) {
  const list = document.getElementById('events');
  const li = document.createElement('li');
  const type = document.createElement('span');
  type.className = 'type';
  type.textContent = event.type;
  const detail = [event.key, event.fence === undefined ? '' : 'fence ' + event.fence, event.by ? 'by ' + event.by : '', event.reason || '', event.error || ''].filter(Boolean).join(' · ');
  li.append(new Date(event.at).toLocaleTimeString() + ' ', type, detail);
  list.prepend(li);
  while (list.children.length > 50) list.lastChild.remove();
}

function connect() {
  const live = document.getElementById('live');
  const source = new EventSource(CONFIG.base + '/api/events');
  source.addEventListener('open', () => { live.textContent = 'live'; live.className = 'status live'; });
  source.addEventListener('error', () => { live.textContent = 'reconnecting…'; live.className = 'status down'; });
  source.addEventListener('lock', (message) => {
    const event = JSON.parse(message.data);
    showEvent(event);
    if (event.type !== 'extended') scheduleRefresh();
  });
}

prefixInput.addEventListener('input', scheduleRefresh);
setInterval(tick, 200);
setInterval(refresh, 5000); // locks of other instances send no event here
refresh();
connect();
`;
