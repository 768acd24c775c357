// The nemesis history checker: a fenced, owner-aware mutex model over a recorded history, plus the
// guarded-resource and canary workloads. Plain JavaScript so that a history can be re-checked
// offline without a build: `node test/nemesis/check.mjs .test-results/nemesis/<file>.json`.
// Types: checker.d.mts. Semantics: docs/faults.md ("How a history is checked").

/** The clock-drift allowance of a lease as the library documents it: lease x 0.01 + 2 ms. */
export const driftAllowanceMs = (leaseMs) => leaseMs * 0.01 + 2;

/**
 * Checks one history. A holder holds from its acquire `ok` until the first of: its release
 * invocation, its lost signal, its process stopping (killed, or paused for at least its lease
 * less the drift allowance, so that the lease ran out meanwhile: its lost signal then fires at the
 * resume), or the end of the history.
 * @param {import('./checker.d.mts').History} history
 * @returns {import('./checker.d.mts').CheckReport}
 */
export function checkHistory(history) {
  const events = [...history.events]
    .map((event, index) => ({ event, index }))
    .sort((a, b) => a.event.time - b.event.time || a.index - b.index)
    .map((e) => e.event);
  const violations = [];
  const holds = [];
  const state = new Map();
  const pausedSince = new Map();
  const pauses = new Map();
  // Per client, the partition it is under: 'replies-dropped' still lets its requests reach the store.
  const cutOff = new Map();
  const stateOf = (p) => state.get(p) ?? (state.set(p, { hold: undefined, acquired: undefined }), state.get(p));
  let maxFence = -Infinity;
  const invokedAt = new Map();
  let longestFailedAcquireMs = null;
  let acquiresPastWaitBound = 0;
  const counts = {
    operations: 0,
    acquisitions: 0,
    acquireFailed: 0,
    acquireIndeterminate: 0,
    releases: 0,
    guardedAccepted: 0,
    guardedRefused: 0,
    guardedIndeterminate: 0,
    canaryWrites: 0,
  };
  const canary = { lostUpdates: 0, writesAfterLoss: 0 };
  const endHold = (hold, time, endedBy) => {
    if (hold && hold.end === undefined) Object.assign(hold, { end: time, endedBy });
  };
  const lastTime = events.length ? events[events.length - 1].time : 0;
  // A pause shorter than this cannot have outlived the lease: it excuses nothing.
  const leaseMs = Number(history.meta.leaseMs);
  if (!(leaseMs > 0)) throw new Error(`the history's meta has no leaseMs (got ${history.meta.leaseMs})`);
  const lapsingPauseMs = leaseMs - driftAllowanceMs(leaseMs);

  for (const event of events) {
    const p = event.process;
    if (p === 'nemesis') {
      if (event.f === 'pause') pausedSince.set(event.target, event.time);
      if (event.f === 'resume' && pausedSince.has(event.target)) {
        pauses.set(event.target, [...(pauses.get(event.target) ?? []), [pausedSince.get(event.target), event.time]]);
        pausedSince.delete(event.target);
      }
      if (event.f === 'kill') endHold(stateOf(event.target).hold, event.time, 'killed');
      if (event.f === 'partition' && event.target !== undefined) cutOff.set(event.target, event.mode ?? 'partitioned');
      if (event.f === 'heal' && event.target !== undefined) cutOff.delete(event.target);
      continue;
    }
    const s = stateOf(p);
    if (event.type === 'invoke') counts.operations++;
    if (event.f === 'acquire' && event.type === 'invoke') invokedAt.set(p, event.time);
    if (
      event.f === 'acquire' &&
      (event.type === 'fail' || event.type === 'info') &&
      invokedAt.has(p) &&
      !/abort/i.test(String(event.error))
    ) {
      longestFailedAcquireMs = Math.max(longestFailedAcquireMs ?? 0, round(event.time - invokedAt.get(p)));
      if (event.pastBound === true) acquiresPastWaitBound++;
    }
    switch (`${event.f}:${event.type}`) {
      case 'acquire:ok': {
        counts.acquisitions++;
        if (s.acquired && s.hold?.end === undefined) {
          if (event.fence !== s.acquired.fence)
            violations.push({
              kind: 'reentry-fence-changed',
              process: p,
              time: event.time,
              fence: event.fence,
              held: s.acquired.fence,
            });
          break;
        }
        if (typeof event.fence === 'number') {
          if (event.fence <= maxFence)
            violations.push({
              kind: 'fence-regression',
              process: p,
              time: event.time,
              fence: event.fence,
              highest: maxFence,
            });
          maxFence = Math.max(maxFence, event.fence);
        }
        s.hold = { process: p, fence: event.fence, start: event.time, end: undefined, endedBy: undefined };
        s.acquired = s.hold;
        holds.push(s.hold);
        break;
      }
      case 'acquire:fail':
        counts.acquireFailed++;
        break;
      case 'acquire:info':
        counts.acquireIndeterminate++;
        break;
      case 'lost:event': {
        const hold = s.hold;
        if (!hold || hold.end !== undefined) break;
        const pause = (pauses.get(p) ?? []).find(
          ([from, to]) => from >= hold.start && to <= event.time && to - from >= lapsingPauseMs,
        );
        if (pause) endHold(hold, pause[0], 'paused');
        else {
          endHold(hold, event.time, 'lost');
          hold.lateMs = typeof event.lateMs === 'number' && event.lateMs > 0 ? event.lateMs : 0;
          // On a lost signal the library frees the key itself: when that release can reach the store, it, not the lease's expiry, may free the key.
          hold.releaseReachesStore = cutOff.get(p) === undefined || cutOff.get(p) === 'replies-dropped';
        }
        break;
      }
      case 'release:invoke':
        endHold(s.hold, event.time, 'release');
        break;
      case 'release:ok':
        counts.releases++;
        if (!s.acquired) violations.push({ kind: 'release-by-non-holder', process: p, time: event.time });
        s.acquired = undefined;
        break;
      case 'release:fail':
      case 'release:info':
        s.acquired = undefined;
        break;
      case 'write:ok':
        if (event.resource === 'guarded') {
          counts.guardedAccepted++;
          if (event.prior !== event.read)
            violations.push({
              kind: 'guarded-lost-update',
              process: p,
              time: event.time,
              read: event.read,
              prior: event.prior,
            });
          if (typeof event.priorFence === 'number' && event.fence < event.priorFence)
            violations.push({
              kind: 'guarded-stale-write',
              process: p,
              time: event.time,
              fence: event.fence,
              priorFence: event.priorFence,
            });
        } else {
          counts.canaryWrites++;
          if (event.prior !== event.read) canary.lostUpdates++;
          const hold = s.acquired;
          if (hold && hold.end !== undefined && hold.endedBy !== 'release' && hold.end < event.time)
            canary.writesAfterLoss++;
        }
        break;
      case 'write:fail':
        if (event.resource === 'guarded') counts.guardedRefused++;
        break;
      case 'write:info':
        if (event.resource === 'guarded') counts.guardedIndeterminate++;
        break;
      case 'exit:event':
        endHold(s.hold, event.time, 'exited');
        break;
    }
  }
  for (const hold of holds) endHold(hold, lastTime, 'history end');

  const byStart = [...holds].sort((a, b) => a.start - b.start);
  // A hold ended by its lost signal ends, for the overlap, at its lease's local deadline when the
  // event loop ran the signal's timer late (lateMs): the lease had run out by the holder's own clock,
  // and what a loaded event loop does to the signal is measured apart (the due margin, and for a
  // store across a network the signal's own margin). Any other hold ends when it ended.
  const grantEnd = (hold) => (hold.endedBy === 'lost' ? hold.end - (hold.lateMs ?? 0) : hold.end);
  let longestOverlapMs = 0;
  for (let i = 0; i < byStart.length; i++) {
    for (let j = i + 1; j < byStart.length && byStart[j].start < grantEnd(byStart[i]); j++) {
      const [a, b] = [byStart[i], byStart[j]];
      if (a.process === b.process) continue;
      const overlapMs = Math.min(grantEnd(a), grantEnd(b)) - b.start;
      longestOverlapMs = Math.max(longestOverlapMs, overlapMs);
      violations.push({
        kind: 'overlap',
        process: b.process,
        time: b.start,
        other: a.process,
        overlapMs: round(overlapMs),
        fences: [a.fence, b.fence],
        firstEndedBy: a.endedBy,
      });
    }
  }

  // How long before the next holder each lost signal fired (negative: after, an overlap). A next
  // holder that came after the signal of a holder whose own release-on-loss could reach the store
  // may owe the key to that release, not to the lease's expiry: that margin measures the release's
  // round trip, not the drift allowance, and is kept apart.
  // The due margin counts from the lease's local deadline instead of the signal: what the library
  // promised, apart from how late a loaded event loop ran the timer (longestLostLateMs).
  const lostMargins = [];
  const dueLostMargins = [];
  const freedByHolderMargins = [];
  let longestLostLateMs = null;
  for (const hold of byStart) {
    if (hold.endedBy !== 'lost') continue;
    const next = byStart.find((other) => other.process !== hold.process && other.start >= hold.start);
    if (!next) continue;
    const margin = round(next.start - hold.end);
    if (hold.releaseReachesStore && margin >= 0) {
      freedByHolderMargins.push(margin);
      continue;
    }
    lostMargins.push(margin);
    dueLostMargins.push(round(margin + hold.lateMs));
    longestLostLateMs = Math.max(longestLostLateMs ?? 0, round(hold.lateMs));
  }

  let longestWithoutHolderMs = 0;
  let coveredUntil = byStart[0]?.start;
  for (const hold of byStart) {
    if (hold.start > coveredUntil) longestWithoutHolderMs = Math.max(longestWithoutHolderMs, hold.start - coveredUntil);
    coveredUntil = Math.max(coveredUntil, hold.end);
  }
  // Clients still trying after the last hold ended (all their acquisitions failing until the run stopped) count too.
  const lastClientTime = events.reduce(
    (last, e) => (e.process === 'nemesis' ? last : Math.max(last, e.time)),
    -Infinity,
  );
  if (coveredUntil !== undefined && lastClientTime > coveredUntil)
    longestWithoutHolderMs = Math.max(longestWithoutHolderMs, lastClientTime - coveredUntil);

  const recoveries = events
    .filter(
      (e) =>
        e.process === 'nemesis' && (e.f === 'heal' || e.f === 'resume' || e.f === 'restarted' || e.f === 'promoted'),
    )
    .map((heal) => {
      const next = (who) => byStart.find((h) => h.start >= heal.time && (who === undefined || h.process === who));
      const any = next();
      const cutOff = heal.target !== undefined;
      const target = cutOff ? next(heal.target) : undefined;
      const answer = cutOff ? firstAnswer(events, heal.target, heal.time) : undefined;
      return {
        f: heal.f,
        time: heal.time,
        target: heal.target,
        anyMs: any ? round(any.start - heal.time) : null,
        targetMs: !cutOff ? null : target ? round(target.start - heal.time) : null,
        answerMs: !cutOff ? null : answer !== undefined ? round(answer - heal.time) : null,
      };
    });

  return {
    meta: history.meta,
    ...counts,
    violations,
    violationCount: violations.length,
    canaryAnomalies: canary.lostUpdates + canary.writesAfterLoss,
    canary,
    longestOverlapMs: round(longestOverlapMs),
    minLostMarginMs: lostMargins.length ? Math.min(...lostMargins) : null,
    lostMargins,
    minDueLostMarginMs: dueLostMargins.length ? Math.min(...dueLostMargins) : null,
    dueLostMargins,
    longestLostLateMs,
    freedByHolderMargins,
    longestWithoutHolderMs: round(longestWithoutHolderMs),
    longestFailedAcquireMs,
    acquiresPastWaitBound,
    recoveries,
  };
}

const round = (ms) => Math.round(ms * 10) / 10;

/** When client `who` first heard from the store at or after `since` (its `heard` event, or an acquisition or release that took effect). Undefined if it never did. */
function firstAnswer(events, who, since) {
  const answer = events.find(
    (e) =>
      e.process === who &&
      e.time >= since &&
      (e.f === 'heard' || (e.type === 'ok' && (e.f === 'acquire' || e.f === 'release'))),
  );
  return answer?.time;
}
