import type { MessageEvent } from '@nestjs/common';
import { endWith, ignoreElements, interval, map, merge, takeUntil, type Observable } from 'rxjs';
import type { LockEvent } from '../engine/lock-events.js';
import { eventJson } from './admin-event-log.js';

/** How often the stream sends a keep-alive, so proxies do not close an idle connection. */
const KEEP_ALIVE_MS = 15_000;

/** The engine's events as server-sent events: JSON data (errors as their message), plus keep-alives. */
export function adminEventStream(events: Observable<LockEvent>): Observable<MessageEvent> {
  const lockEvents = events.pipe(map((event): MessageEvent => ({ type: 'lock', data: eventJson(event) })));
  // The stream ends when the engine's events complete (application shutdown).
  const ended = events.pipe(ignoreElements(), endWith(true));
  return merge(lockEvents, interval(KEEP_ALIVE_MS).pipe(map((): MessageEvent => ({ type: 'ping', data: '' })))).pipe(
    takeUntil(ended),
  );
}
