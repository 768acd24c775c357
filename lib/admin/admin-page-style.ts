/**
 * The admin page's style. Long values (keys, labels) never widen the page: table cells are of
 * fixed layout and cut them with an ellipsis (the whole value in the title and the detail view);
 * under 760 px the table turns into one card per lock. A holder's fence (16 digits on Redis, etcd's
 * and SQL's can be as long) goes under its instance and label when the three do not fit on one line,
 * rather than squeezing the label to nothing.
 */
export const PAGE_STYLE = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; }
small { color: #5b6478; font-weight: normal; font-size: .8em; }
header { display: flex; flex-wrap: wrap; gap: .6rem 1.5rem; align-items: center; padding: .75rem 1.25rem; background: #1d2330; color: #fff; }
header h1 { font-size: 1.2rem; margin: 0; } header small { color: #c3cad8; }
.field { display: inline-flex; gap: .4rem; align-items: center; }
input, select, textarea { font: inherit; padding: .25rem .4rem; border-radius: 4px; border: 1px solid #8a93a6; background: #fff; color: #1d2330; min-width: 0; }
#filter { width: 16rem; max-width: 100%; }
.status { margin-left: auto; font-size: .85rem; } .status.live { color: #7ee2a8; } .status.down { color: #ffb3a8; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 20rem; gap: 1.25rem; padding: 1.25rem; }
.toolbar { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: baseline; justify-content: space-between; }
h2 { font-size: 1rem; margin: .2rem 0 .6rem; } h3 { font-size: .9rem; margin: 1rem 0 .4rem; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; background: #fff; box-shadow: 0 1px 2px #0002; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid #e5e8ee; vertical-align: top; overflow: hidden; }
th { font-size: .8rem; text-transform: uppercase; color: #4a5263; }
th small { text-transform: none; }
th button { all: unset; cursor: pointer; text-decoration: underline dotted; }
th button:focus-visible { outline: 2px solid #2b63d9; }
th[aria-sort=ascending] button::after { content: ' ▲'; } th[aria-sort=descending] button::after { content: ' ▼'; }
.c-mode { width: 6.5rem; } .c-age { width: 5.5rem; } .c-lease { width: 5.5rem; } .c-wait { width: 5.2rem; } .c-act { width: 6rem; } .c-key { width: 22%; }
.key-link { all: unset; cursor: pointer; font-family: ui-monospace, monospace; color: #1b4fb8; text-decoration: underline; }
.key-link:focus-visible { outline: 2px solid #2b63d9; }
.trunc { display: block; max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
td.num, .num { font-variant-numeric: tabular-nums; }
.low { color: #b03121; font-weight: 600; }
ul.holders { list-style: none; margin: 0; padding: 0; }
ul.holders li { display: flex; flex-wrap: wrap; gap: 0 .4rem; min-width: 0; }
ul.holders .inst { flex: 0 1 auto; min-width: 4ch; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
ul.holders .label { flex: 1 1 12ch; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: #4a5263; }
.fence { flex: none; font-family: ui-monospace, monospace; color: #4a5263; }
.tag { flex: none; font-size: .75rem; border: 1px solid #8a93a6; border-radius: 3px; padding: 0 .25rem; }
button { font: inherit; border: 1px solid #8a93a6; color: #1d2330; background: #fff; border-radius: 4px; padding: .2rem .6rem; cursor: pointer; }
button.danger { border-color: #b03121; color: #b03121; }
button:disabled { border-color: #ccc; color: #6b7280; cursor: not-allowed; }
.pager { display: flex; gap: 1rem; align-items: center; margin: .6rem 0; }
.error { color: #b03121; } #message { min-height: 1.4em; }
aside { min-width: 0; }
aside > section { background: #fff; box-shadow: 0 1px 2px #0002; padding: .5rem 1rem; margin-bottom: 1rem; }
ol.plain { list-style: none; padding: 0; margin: 0; font-size: .85rem; }
ol.plain li { padding: .3rem 0; border-bottom: 1px solid #eee; min-width: 0; }
#events { max-height: 60vh; overflow: auto; }
.ev-head { display: flex; gap: .4rem; align-items: baseline; min-width: 0; }
.ev-head .num { flex: none; white-space: nowrap; }
.ev-type { font-weight: 600; flex: none; } .ev-type.bad { color: #b03121; }
.ev-head .key-link { flex: 1 1 auto; min-width: 0; }
.ev-detail { color: #4a5263; overflow-wrap: anywhere; }
dialog { width: min(56rem, calc(100vw - 1.5rem)); max-height: calc(100vh - 1.5rem); border: 0; border-radius: 6px; box-shadow: 0 8px 32px #0005; padding: 1rem 1.25rem; }
dialog::backdrop { background: #1d233080; }
.dialog-head { display: flex; justify-content: space-between; align-items: center; gap: 1rem; }
.full-key { display: flex; gap: .6rem; align-items: flex-start; }
.full-key code { flex: 1 1 auto; min-width: 0; max-height: 8rem; overflow: auto; overflow-wrap: anywhere; background: #f0f2f6; padding: .3rem .5rem; border-radius: 4px; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .2rem 1rem; margin: .8rem 0; }
dt { color: #4a5263; } dd { margin: 0; overflow-wrap: anywhere; }
.wrap-table td, .wrap-table th { overflow-wrap: anywhere; }
.wrap-table .c-fence { width: 12rem; overflow-wrap: normal; }
#release-reason { width: 100%; display: block; margin: .3rem 0; }
.actions { display: flex; gap: .6rem; justify-content: flex-end; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 760px) {
  header { padding: .6rem .75rem; } .status { margin-left: 0; }
  main { grid-template-columns: minmax(0, 1fr); padding: .75rem; }
  #filter { width: 100%; } .field { width: 100%; } .field input, .field select { flex: 1 1 auto; }
  #locks, #locks tbody, #locks tr, #locks td { display: block; width: 100%; }
  #locks thead tr { display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
  #locks thead th { display: none; border: 0; padding: .2rem 0; width: auto; }
  #locks thead th[data-sort] { display: block; }
  #locks tr { border-bottom: 2px solid #d5dae3; padding: .4rem 0; }
  #locks td { border: 0; padding: .15rem .6rem; display: flex; gap: .6rem; }
  #locks td::before { content: attr(data-label); flex: none; width: 5.5rem; color: #4a5263; font-size: .8rem; text-transform: uppercase; }
  #locks td > * { min-width: 0; flex: 1 1 auto; }
  #locks td.c-act::before { content: ''; }
}
`;
