import type * as OtelApi from '@opentelemetry/api';
import type { LockEvent } from '../engine/lock-events.js';
import { loadOptional } from '../util/load-optional.js';
import type { LockEventSource, MetricsSubscription } from './observable-like.js';

/** Options of `subscribeLockTracing`. */
export interface LockTracingOptions {
  /** The tracer to use (an `@opentelemetry/api` Tracer). Default: `trace.getTracer('nestjs-distributed-lock')`. */
  tracer?: unknown;
  /** The `@opentelemetry/api` module, when it cannot be imported by name (bundlers). Loaded lazily otherwise. */
  otelApi?: unknown;
}

/** OpenTelemetry attribute names used on every lock event. */
export const LOCK_TRACE_ATTRIBUTES = {
  key: 'lock.key',
  fence: 'lock.fence',
  backend: 'lock.backend',
  store: 'lock.store',
  mode: 'lock.mode',
  waitedMs: 'lock.waited_ms',
  heldMs: 'lock.held_ms',
  error: 'lock.error',
  /** Why an acquisition failed (`acquire-failed`): `store-unavailable` or `shutting-down`. */
  failure: 'lock.failure',
} as const;

/**
 * Reports lock events to OpenTelemetry: each event (`lock.acquired`, `lock.released`,
 * `lock.extended`, `lock.extend-failed`, `lock.lost`, `lock.timeout`, `lock.acquire-failed`, ...)
 * becomes a span event on the caller's active span when there is one, or else a short span of its
 * own, with the key and fence as attributes. Losses, failed renewals, timeouts and acquisitions the
 * store did not answer (`lock.failure` = `store-unavailable`) set the span's status to ERROR; a
 * refusal because this instance is shutting down (`lock.failure` = `shutting-down`) does not.
 * `@opentelemetry/api` is an optional peer, imported on the first call.
 */
export async function subscribeLockTracing(
  events: LockEventSource<LockEvent>,
  options: LockTracingOptions = {},
): Promise<MetricsSubscription> {
  const api = (options.otelApi ?? (await loadOptional('@opentelemetry/api', 'subscribeLockTracing'))) as typeof OtelApi;
  const tracer = (options.tracer as OtelApi.Tracer | undefined) ?? api.trace.getTracer('nestjs-distributed-lock');
  return events.subscribe((event) => {
    try {
      const name = `lock.${event.type}`;
      const attributes = lockEventAttributes(event);
      const failed =
        event.type === 'lost' ||
        event.type === 'extend-failed' ||
        event.type === 'release-failed' ||
        event.type === 'timeout' ||
        (event.type === 'acquire-failed' && event.reason === 'store-unavailable');
      const active = api.trace.getActiveSpan();
      if (active?.isRecording()) {
        active.addEvent(name, attributes);
        return;
      }
      const span = tracer.startSpan(name, { attributes });
      if (failed)
        span.setStatus({
          code: api.SpanStatusCode.ERROR,
          message: 'error' in event ? event.error.message : 'lock busy',
        });
      span.end();
    } catch {
      // Tracing must never disturb the lock engine.
    }
  });
}

/** The attributes of one lock event (key, fence, backend and what the event carries). */
export function lockEventAttributes(event: LockEvent): Record<string, string | number> {
  const attributes: Record<string, string | number> = {
    [LOCK_TRACE_ATTRIBUTES.key]: event.key,
    [LOCK_TRACE_ATTRIBUTES.backend]: event.backend,
    [LOCK_TRACE_ATTRIBUTES.store]: event.store,
  };
  if ('fence' in event && event.fence !== undefined) attributes[LOCK_TRACE_ATTRIBUTES.fence] = event.fence;
  if ('mode' in event) attributes[LOCK_TRACE_ATTRIBUTES.mode] = event.mode;
  if ('waitedMs' in event) attributes[LOCK_TRACE_ATTRIBUTES.waitedMs] = event.waitedMs;
  if ('heldMs' in event) attributes[LOCK_TRACE_ATTRIBUTES.heldMs] = event.heldMs;
  if ('error' in event) attributes[LOCK_TRACE_ATTRIBUTES.error] = event.error.message;
  if (event.type === 'acquire-failed') attributes[LOCK_TRACE_ATTRIBUTES.failure] = event.reason;
  return attributes;
}
