/**
 * The page's script, part 3: this instance's lock events (the recent ones it kept, then live by
 * server-sent events), filterable by type with renewals hidden by default; the hot keys panel
 * (most waiting time and timeouts over the last minutes, from those events); and the start.
 */
export const EVENTS_SCRIPT = `
const HOT_WINDOW_MS = 5 * 60_000;
const KEPT_EVENTS = 1000;
let events = [];
let source;

function eventDetail(event) {
  const parts = [];
  if (event.mode && event.mode !== 'exclusive') parts.push(event.mode);
  if (event.fence !== undefined && event.fence !== null) parts.push('fence ' + event.fence);
  if (event.waitedMs !== undefined) parts.push('waited ' + duration(event.waitedMs));
  if (event.heldMs !== undefined) parts.push('held ' + duration(event.heldMs));
  if (event.method) parts.push(event.method);
  if (event.by) parts.push('by ' + (event.actor ? event.actor + ' on ' : '') + event.by);
  if (event.reason) parts.push(event.reason);
  if (event.evicted) parts.push('evicted ' + event.evicted.map(holderText).join('; '));
  if (event.error) parts.push(event.error);
  return parts.join(' · ');
}

const BAD = new Set(['lost', 'timeout', 'extend-failed', 'release-failed', 'force-released', 'self-wait']);
/** A refusal while this instance shuts down is a deploy, not a fault. */
const isBad = (event) => BAD.has(event.type) || (event.type === 'acquire-failed' && event.reason !== 'shutting-down');

function eventItem(event) {
  return el('li', { 'data-type': event.type },
    el('div', { className: 'ev-head' },
      el('span', { className: 'num', text: new Date(event.at - state.skew).toLocaleTimeString() }),
      el('span', { className: 'ev-type' + (isBad(event) ? ' bad' : ''), text: event.type }),
      keyLink(event.key)),
    el('div', { className: 'ev-detail', text: eventDetail(event) }));
}

function shownEvents() {
  const type = $('event-type').value;
  return events.filter((event) => (type === '*' ? true : type === '' ? event.type !== 'extended' : event.type === type));
}

function renderEvents() {
  const shown = shownEvents().slice(-100).reverse();
  $('events').replaceChildren(...(shown.length ? shown.map(eventItem) : [el('li', { text: 'No event to show yet.' })]));
}

function renderHotKeys() {
  const since = serverNow() - HOT_WINDOW_MS;
  const keys = new Map();
  for (const event of events) {
    if (event.at < since || (event.type !== 'acquired' && event.type !== 'timeout')) continue;
    const entry = keys.get(event.key) || { key: event.key, waitedMs: 0, timeouts: 0 };
    entry.waitedMs += event.waitedMs || 0;
    if (event.type === 'timeout') entry.timeouts += 1;
    keys.set(event.key, entry);
  }
  const hot = [...keys.values()].filter((entry) => entry.waitedMs >= 100 || entry.timeouts > 0)
    .sort((a, b) => b.timeouts - a.timeouts || b.waitedMs - a.waitedMs).slice(0, 8);
  $('hot-keys').replaceChildren(...(hot.length ? hot.map((entry) => el('li', {},
    el('div', { className: 'ev-head' }, keyLink(entry.key)),
    el('div', { className: 'ev-detail', text: 'waited ' + duration(entry.waitedMs) + (entry.timeouts ? ' · ' + plural(entry.timeouts, 'timeout') : '') }))) : [el('li', { text: 'No wait over 100 ms in the last 5 minutes.' })]));
}

function addEvent(event) {
  events.push(event);
  if (events.length > KEPT_EVENTS) events.splice(0, events.length - KEPT_EVENTS);
}

async function loadRecent() {
  try {
    const recent = await api('recent', { store: state.store });
    events = recent.events.concat(events.filter((event) => event.type === 'extended'));
    events.sort((a, b) => a.at - b.at);
  } catch (error) {
    say('Could not read the recent events: ' + error.message, true);
  }
  renderEvents();
  renderHotKeys();
}

function connect() {
  if (source) source.close();
  events = [];
  const live = $('live');
  live.textContent = 'connecting…';
  live.className = 'status';
  source = new EventSource(API + 'events?' + new URLSearchParams({ store: state.store }));
  source.addEventListener('open', () => { live.textContent = 'live'; live.className = 'status live'; });
  source.addEventListener('error', () => { live.textContent = 'reconnecting…'; live.className = 'status down'; });
  source.addEventListener('lock', (message) => {
    const event = JSON.parse(message.data);
    addEvent(event);
    const type = $('event-type').value;
    if (type === '*' || type === event.type || (type === '' && event.type !== 'extended')) renderEvents();
    if (event.type === 'extended') return;
    renderHotKeys();
    scheduleRefresh();
    if (detailKey === event.key) loadDetail();
  });
  loadRecent();
}

$('event-type').addEventListener('change', renderEvents);
setupList();
setupDetail();
setInterval(renderHotKeys, 10_000);
refresh();
connect();
`;
