import type { LockEventType } from '../engine/lock-events.js';
import { DETAIL_SCRIPT } from './admin-page-detail-script.js';
import { EVENTS_SCRIPT } from './admin-page-events-script.js';
import { LIST_SCRIPT } from './admin-page-list-script.js';
import { PAGE_STYLE } from './admin-page-style.js';

/** What the page is told when it is served. */
interface AdminPageSettings {
  /** The stores it can show, the one to show first first. */
  readonly stores: readonly string[];
  /** Release: `'on'`, `'off'` (the button is shown disabled: no guard protects it), `'none'` (read-only: no button). */
  readonly release: 'on' | 'off' | 'none';
  /** The Content-Security-Policy nonce of its style and script. */
  readonly nonce: string;
}

/** Every event type, for the events filter (the compiler says when a type is added). */
const EVENT_TYPES = Object.keys({
  acquired: true,
  released: true,
  extended: true,
  'extend-failed': true,
  lost: true,
  timeout: true,
  'release-failed': true,
  'force-released': true,
  skipped: true,
  'self-wait': true,
  'acquire-failed': true,
} satisfies Record<LockEventType, true>);

/**
 * The admin page: one HTML document with its style and script inline (no build step, nothing
 * fetched from elsewhere), allowed by a Content-Security-Policy nonce. Everything from the store
 * (keys, instances, labels) is put in the page with `textContent`, never as HTML. Its JSON URLs
 * are computed from `location`, so the page works wherever the app (or a proxy) mounts it.
 */
export function adminPageHtml(settings: AdminPageSettings): string {
  const config = JSON.stringify({ stores: settings.stores, release: settings.release }).replace(/</g, '\\u003c');
  const eventOptions = EVENT_TYPES.map((type) => `<option value="${type}">${type}</option>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Locks</title>
<style nonce="${settings.nonce}">${PAGE_STYLE}</style>
</head>
<body>
<header>
  <h1>Locks <small id="store-name"></small></h1>
  <label id="store-field" class="field">Store <select id="store"></select></label>
  <label class="field">Filter keys <input id="filter" type="search" placeholder="key prefix, e.g. orders:" autocomplete="off" spellcheck="false"></label>
  <span id="live" class="status">connecting…</span>
</header>
<main>
  <section class="locks" aria-labelledby="locks-title">
    <div class="toolbar">
      <h2 id="locks-title">Held locks <small>in the store, every instance</small></h2>
      <label class="field">Per page <select id="page-size"><option>25</option><option selected>100</option><option>500</option></select></label>
    </div>
    <table id="locks">
      <thead><tr>
        <th scope="col" class="c-key" data-sort="key"><button type="button">Key</button></th>
        <th scope="col" class="c-mode">Mode</th>
        <th scope="col" class="c-holders">Holders <small>instance · label · fence</small></th>
        <th scope="col" class="c-age" data-sort="age"><button type="button">Age</button></th>
        <th scope="col" class="c-lease">Lease left</th>
        <th scope="col" class="c-wait" data-sort="waiters"><button type="button">Waiting</button></th>
        <th scope="col" class="c-act"><span class="sr">Actions</span></th>
      </tr></thead>
      <tbody></tbody>
    </table>
    <p id="empty" hidden></p>
    <nav class="pager" aria-label="Pages of locks">
      <button type="button" id="prev">← Previous</button>
      <span id="page-no"></span>
      <button type="button" id="next">Next →</button>
    </nav>
    <p id="message" role="status"></p>
  </section>
  <aside aria-label="This instance">
    <section aria-labelledby="hot-title">
      <h2 id="hot-title">Hot keys <small>events of this instance, last 5 min</small></h2>
      <ol id="hot-keys" class="plain"></ol>
    </section>
    <section aria-labelledby="events-title">
      <h2 id="events-title">Events <small>of this instance</small></h2>
      <label class="field">Show <select id="event-type"><option value="">all but renewals</option><option value="*">all</option>${eventOptions}</select></label>
      <ol id="events" class="plain"></ol>
    </section>
  </aside>
</main>
<dialog id="detail" aria-labelledby="detail-title">
  <div class="dialog-head"><h2 id="detail-title">Lock</h2><button type="button" id="detail-close">Close</button></div>
  <div class="full-key"><code id="detail-key"></code><button type="button" id="detail-copy">Copy key</button></div>
  <dl id="detail-facts"></dl>
  <h3>Holders</h3>
  <div id="detail-holders"></div>
  <h3>Waiters <small>in queue order</small></h3>
  <div id="detail-waiters"></div>
  <h3>Events of this instance for this key <small>renewals not kept</small></h3>
  <ol id="detail-events" class="plain"></ol>
  <p><button type="button" id="detail-release" class="danger">Release…</button></p>
</dialog>
<dialog id="release" aria-labelledby="release-title">
  <form id="release-form" novalidate>
    <h2 id="release-title">Force-release</h2>
    <p class="full-key"><code id="release-key"></code></p>
    <p id="release-scope"></p>
    <label for="release-reason">Reason <small>(required: kept in the force-released event and the logs)</small></label>
    <textarea id="release-reason" rows="3" maxlength="500" required></textarea>
    <p id="release-error" class="error" role="alert"></p>
    <div class="actions"><button type="button" id="release-cancel">Cancel</button><button type="submit" id="release-confirm" class="danger">Release</button></div>
  </form>
</dialog>
<script nonce="${settings.nonce}">'use strict';
const CONFIG = ${config};
${LIST_SCRIPT}
${DETAIL_SCRIPT}
${EVENTS_SCRIPT}</script>
</body>
</html>
`;
}
