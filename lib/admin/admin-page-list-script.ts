/**
 * The page's script, part 1: helpers, the JSON API (URLs computed from `location`, so a global
 * prefix or a proxy sub-path need nothing), and the lock list: sorting, paging through `list`
 * cursors, the key filter, the store selector, the lease and age countdowns.
 */
export const LIST_SCRIPT = `
const API = location.pathname.replace(/\\/+$/, '') + '/api/';
const state = { store: CONFIG.stores[0], prefix: '', pageSize: 100, cursors: [undefined], next: undefined, locks: [], sort: { by: 'key', dir: 1 }, skew: 0, listFailed: false };
const $ = (id) => document.getElementById(id);
let timed = [];
let detailTimed = [];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === false || value === null) continue;
    if (name === 'className') node.className = value;
    else if (name === 'text') node.textContent = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  node.append(...children.filter((child) => child !== undefined && child !== null && child !== false));
  return node;
}

function duration(ms) {
  if (ms < 1000) return Math.max(0, Math.round(ms)) + ' ms';
  const s = ms / 1000;
  if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + ' s';
  const m = Math.floor(s / 60);
  if (m < 60) return m + ' min ' + Math.floor(s % 60) + ' s';
  const h = Math.floor(m / 60);
  if (h < 24) return h + ' h ' + (m % 60) + ' min';
  return Math.floor(h / 24) + ' d ' + (h % 24) + ' h';
}

const plural = (n, word) => n + ' ' + word + (n === 1 ? '' : 's');
const serverNow = () => Date.now() + state.skew;

function say(text, isError) {
  $('message').textContent = text;
  $('message').className = isError ? 'error' : '';
}

async function api(path, params, init) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params || {})) if (value !== undefined && value !== '') query.set(name, value);
  const search = query.toString();
  const response = await fetch(API + path + (search ? '?' + search : ''), { ...init, headers: { accept: 'application/json', ...(init && init.headers) } });
  const date = Date.parse(response.headers.get('date') || '');
  if (!Number.isNaN(date)) state.skew = Math.abs(date - Date.now()) > 2000 ? date - Date.now() : 0;
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(response.status + ' ' + (body.message || response.statusText)), { status: response.status });
  return body;
}

function waitingOf(lock) {
  return lock.waiters ? lock.waiters.length : lock.waiting;
}

function acquiredAtOf(lock) {
  const times = lock.holders.map((holder) => holder.acquiredAt).filter(Number.isFinite);
  return times.length ? Math.min(...times) : undefined;
}

function modeOf(lock) {
  const parts = [];
  if (lock.mode) parts.push(lock.mode);
  if (lock.semaphore) parts.push('semaphore ' + lock.semaphore.used + (lock.semaphore.permits ? '/' + lock.semaphore.permits : ''));
  return parts.join(' + ') || (lock.held ? '' : 'free');
}

function holderText(holder) {
  return [holder.permit ? 'permit' : '', holder.instance || 'unknown instance', holder.label || '', holder.fence === undefined ? '' : 'fence ' + holder.fence].filter(Boolean).join(' · ');
}

function holderList(holders, max) {
  if (!holders.length) return el('ul', { className: 'holders' }, el('li', { text: 'nobody (waiters only)' }));
  const shown = holders.slice(0, max).map((holder) => el('li', { title: holderText(holder) },
    holder.permit ? el('span', { className: 'tag', text: 'permit' }) : null,
    el('span', { className: 'inst', text: holder.instance || 'unknown instance' }),
    holder.label ? el('span', { className: 'label', text: holder.label }) : null,
    holder.fence === undefined ? null : el('span', { className: 'fence', text: '#' + holder.fence })));
  if (holders.length > max) shown.push(el('li', { text: '+' + (holders.length - max) + ' more (open the key)' }));
  return el('ul', { className: 'holders' }, ...shown);
}

/** A cell that counts down a lease, or up an age, every tick. */
function timedCell(attrs, kind, time, list) {
  const cell = el('td', attrs);
  (list || timed).push({ cell, kind, time });
  return cell;
}

function leaseDeadline(holders) {
  const leases = holders.map((holder) => holder.expiresInMs).filter(Number.isFinite);
  return leases.length ? performance.now() + Math.min(...leases) : undefined;
}

function releaseButton(key) {
  if (CONFIG.release === 'none') return null;
  return el('button', { type: 'button', className: 'danger', disabled: CONFIG.release !== 'on', title: CONFIG.release === 'on' ? 'Force-release this lock' : 'Release is off: register the admin module with guards', onclick: () => openRelease(key) }, 'Release');
}

function keyLink(key) {
  return el('button', { type: 'button', className: 'key-link trunc', title: key, onclick: () => openDetail(key) }, key);
}

function lockRow(lock) {
  const waiting = waitingOf(lock);
  const acquiredAt = acquiredAtOf(lock);
  return el('tr', { 'data-key': lock.key },
    el('td', { className: 'c-key', 'data-label': 'Key' }, keyLink(lock.key)),
    el('td', { className: 'c-mode', 'data-label': 'Mode', text: modeOf(lock) }),
    el('td', { className: 'c-holders', 'data-label': 'Holders' }, holderList(lock.holders, 3)),
    timedCell({ className: 'c-age num', 'data-label': 'Age', title: acquiredAt === undefined ? 'this store does not say when it was acquired' : 'since ' + new Date(acquiredAt - state.skew).toLocaleString() }, 'age', acquiredAt),
    timedCell({ className: 'c-lease num', 'data-label': 'Lease left' }, 'lease', leaseDeadline(lock.holders)),
    el('td', { className: 'c-wait num', 'data-label': 'Waiting', title: lock.waiters ? lock.waiters.map(holderText).join('\\n') : undefined, text: waiting === undefined ? '–' : String(waiting) }),
    el('td', { className: 'c-act' }, releaseButton(lock.key)));
}

function sorted(locks) {
  const { by, dir } = state.sort;
  const value = (lock) => (by === 'age' ? acquiredAtOf(lock) : by === 'waiters' ? waitingOf(lock) : lock.key);
  return [...locks].sort((a, b) => {
    const x = value(a), y = value(b);
    if (x === y) return a.key < b.key ? -1 : 1;
    if (x === undefined) return 1;
    if (y === undefined) return -1;
    // Age sorts by acquisition time: the oldest (smallest) first when descending by age.
    const order = x < y ? -1 : 1;
    return by === 'age' ? -order * dir : order * dir;
  });
}

function renderLocks() {
  timed = [];
  const locks = sorted(state.locks);
  $('locks').tBodies[0].replaceChildren(...locks.map(lockRow));
  $('empty').hidden = locks.length > 0;
  $('empty').textContent = state.prefix ? 'No held lock has a key starting with this filter.' : 'No lock is held.';
  const pageNumber = state.cursors.length;
  $('page-no').textContent = 'Page ' + pageNumber + ' · ' + plural(locks.length, 'lock') + (state.next ? '' : pageNumber > 1 ? ' · last page' : '') + (pageNumber > 1 || state.next ? ' · sorted within the page' : '');
  $('prev').disabled = pageNumber === 1;
  $('next').disabled = !state.next;
  for (const th of document.querySelectorAll('#locks th[data-sort]')) {
    if (th.dataset.sort === state.sort.by) th.setAttribute('aria-sort', state.sort.dir === 1 ? 'ascending' : 'descending');
    else th.removeAttribute('aria-sort');
  }
  tick();
}

function tick() {
  const now = performance.now();
  for (const { cell, kind, time } of [...timed, ...detailTimed]) {
    if (time === undefined) {
      cell.textContent = '–';
      if (kind === 'lease') cell.title = 'this store keeps no per-lock lease (a session or a lease shared by the client)';
    } else if (kind === 'age') {
      cell.textContent = duration(serverNow() - time);
    } else {
      const left = Math.max(0, time - now);
      cell.textContent = (left / 1000).toFixed(1) + ' s';
      cell.classList.toggle('low', left < 2000);
    }
  }
}

let listing = 0;
async function refresh() {
  const ticket = ++listing;
  try {
    const page = await api('locks', { store: state.store, prefix: state.prefix, limit: String(state.pageSize), cursor: state.cursors[state.cursors.length - 1] });
    if (ticket !== listing) return;
    state.locks = page.locks;
    state.next = page.cursor;
    renderLocks();
    if (state.listFailed) say('');
    state.listFailed = false;
  } catch (error) {
    if (ticket !== listing) return;
    state.listFailed = true;
    say('Could not list the locks: ' + error.message, true);
  }
}

let refreshTimer;
function scheduleRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 150);
}

function firstPage() {
  state.cursors = [undefined];
  refresh();
}

function setupList() {
  $('store-name').textContent = CONFIG.stores.length > 1 ? '' : 'store ' + CONFIG.stores[0];
  $('store-field').hidden = CONFIG.stores.length < 2;
  $('store').append(...CONFIG.stores.map((name) => el('option', { value: name }, name)));
  $('store').addEventListener('change', () => {
    state.store = $('store').value;
    firstPage();
    connect();
  });
  $('filter').addEventListener('input', () => {
    state.prefix = $('filter').value;
    state.cursors = [undefined];
    scheduleRefresh();
  });
  $('page-size').addEventListener('change', () => {
    state.pageSize = Number($('page-size').value);
    firstPage();
  });
  $('next').addEventListener('click', () => {
    if (!state.next) return;
    state.cursors.push(state.next);
    refresh();
  });
  $('prev').addEventListener('click', () => {
    if (state.cursors.length > 1) state.cursors.pop();
    refresh();
  });
  for (const th of document.querySelectorAll('#locks th[data-sort]')) {
    th.querySelector('button').addEventListener('click', () => {
      const by = th.dataset.sort;
      state.sort = { by, dir: state.sort.by === by ? -state.sort.dir : by === 'key' ? 1 : -1 };
      renderLocks();
    });
  }
  setInterval(tick, 200);
  setInterval(refresh, 5000); // locks of other instances send no event here
}
`;
