/**
 * The page's script, part 2: the detail view of one key (every holder, the waiters in order, this
 * instance's events of the key, the whole key to copy) and the release dialog (its scope, a
 * required reason).
 */
export const DETAIL_SCRIPT = `
let detailKey;
let releaseKey;

function fact(name, value) {
  return [el('dt', { text: name }), el('dd', { text: value })];
}

function holdersTable(holders) {
  if (!holders.length) return el('p', { text: 'Nobody holds it now.' });
  const now = performance.now();
  const head = el('tr', {}, ...['Instance', 'Label', 'Fence', 'Age', 'Lease left'].map((name) => el('th', { scope: 'col', className: name === 'Fence' ? 'c-fence' : undefined, text: name })));
  const rows = holders.map((holder) => el('tr', {},
    el('td', { text: (holder.permit ? 'permit · ' : '') + (holder.instance || 'unknown instance') }),
    el('td', { text: holder.label || '' }),
    el('td', { className: 'num c-fence', text: holder.fence === undefined ? '–' : String(holder.fence) }),
    timedCell({ className: 'num' }, 'age', holder.acquiredAt, detailTimed),
    timedCell({ className: 'num' }, 'lease', Number.isFinite(holder.expiresInMs) ? now + holder.expiresInMs : undefined, detailTimed)));
  return el('table', { className: 'wrap-table' }, el('thead', {}, head), el('tbody', {}, ...rows));
}

function waitersView(info) {
  if (info.waiters && info.waiters.length) {
    return el('ol', {}, ...info.waiters.map((waiter) => el('li', {},
      [waiter.instance || 'unknown instance', waiter.label || '', Number.isFinite(waiter.since) ? 'waiting ' + duration(serverNow() - waiter.since) : ''].filter(Boolean).join(' · '))));
  }
  if (info.waiting === undefined) return el('p', { text: 'This store does not say who waits.' });
  if (info.waiting === 0) return el('p', { text: 'Nobody waits.' });
  return el('p', { text: plural(info.waiting, 'claim') + ' waiting; this store does not say whose.' });
}

function scopeOf(info) {
  const locks = info.holders.filter((holder) => !holder.permit);
  const permits = info.holders.filter((holder) => holder.permit);
  const parts = [];
  if (locks.length) parts.push(plural(locks.length, info.mode === 'read' ? 'reader' : 'exclusive holder'));
  if (permits.length) parts.push(plural(permits.length, 'semaphore permit'));
  return parts.length ? 'evicts ' + parts.join(' and ') : 'evicts nobody: it is not held now';
}

async function loadDetail() {
  const key = detailKey;
  try {
    const [info, recent] = await Promise.all([api('inspect', { store: state.store, key }), api('recent', { store: state.store, key })]);
    if (key !== detailKey) return;
    detailTimed = [];
    const waiting = waitingOf(info);
    $('detail-facts').replaceChildren(
      ...fact('Store', state.store),
      ...fact('State', info.held ? 'held' : 'free'),
      ...(info.mode ? fact('Mode', info.mode) : []),
      ...(info.semaphore ? fact('Semaphore', info.semaphore.used + ' used' + (info.semaphore.permits ? ' of ' + info.semaphore.permits : '')) : []),
      ...fact('Waiting', waiting === undefined ? 'not reported by this store' : String(waiting)),
      ...(CONFIG.release === 'none' ? [] : fact('Release', scopeOf(info))));
    $('detail-holders').replaceChildren(holdersTable(info.holders));
    $('detail-waiters').replaceChildren(waitersView(info));
    const events = recent.events.slice(-50).reverse();
    $('detail-events').replaceChildren(...(events.length ? events.map(eventItem) : [el('li', { text: 'No event of this key on this instance since it started.' })]));
    tick();
  } catch (error) {
    if (key === detailKey) $('detail-facts').replaceChildren(...fact('Error', 'Could not inspect the key: ' + error.message));
  }
}

function openDetail(key) {
  detailKey = key;
  $('detail-key').textContent = key;
  $('detail-title').textContent = 'Lock';
  for (const id of ['detail-facts', 'detail-holders', 'detail-waiters', 'detail-events']) $(id).replaceChildren();
  const release = $('detail-release');
  release.hidden = CONFIG.release === 'none';
  release.disabled = CONFIG.release !== 'on';
  if (!$('detail').open) $('detail').showModal();
  return loadDetail();
}

async function openRelease(key) {
  releaseKey = key;
  $('release-key').textContent = key;
  $('release-error').textContent = '';
  $('release-reason').value = '';
  $('release-scope').textContent = 'Reading who holds it…';
  $('release-confirm').textContent = 'Release';
  $('release').showModal();
  try {
    const info = await api('inspect', { store: state.store, key });
    if (key !== releaseKey) return;
    const scope = scopeOf(info);
    $('release-scope').textContent = 'Releasing ' + scope + (info.holders.length ? ' (' + info.holders.map(holderText).join('; ') + '). Each holder learns it at its next renewal, its signal aborts; waiters are woken.' : '.');
    $('release-confirm').textContent = 'Release: ' + scope;
  } catch (error) {
    $('release-scope').textContent = 'Could not read who holds it: ' + error.message;
  }
}

async function submitRelease(event) {
  event.preventDefault();
  const key = releaseKey;
  const reason = $('release-reason').value.trim();
  if (!reason) {
    $('release-error').textContent = 'Give a reason: it is kept in the force-released event and the logs.';
    $('release-reason').focus();
    return;
  }
  $('release-confirm').disabled = true;
  try {
    const body = await api('release', { store: state.store }, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key, reason }) });
    $('release').close();
    say(body.released ? 'Released ' + key : key + ' was not held');
    refresh();
    if ($('detail').open && detailKey === key) loadDetail();
  } catch (error) {
    $('release-error').textContent = 'Release refused (' + error.message + ')';
  } finally {
    $('release-confirm').disabled = false;
  }
}

function setupDetail() {
  $('detail-close').addEventListener('click', () => $('detail').close());
  $('detail').addEventListener('close', () => { detailKey = undefined; });
  $('detail-release').addEventListener('click', () => openRelease(detailKey));
  $('detail-copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(detailKey);
      $('detail-copy').textContent = 'Copied';
    } catch {
      getSelection().selectAllChildren($('detail-key'));
      $('detail-copy').textContent = 'Selected: press Ctrl+C';
    }
    setTimeout(() => { $('detail-copy').textContent = 'Copy key'; }, 1500);
  });
  $('release-form').addEventListener('submit', submitRelease);
  $('release-cancel').addEventListener('click', () => $('release').close());
}
`;
