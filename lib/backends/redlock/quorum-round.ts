import { callNode, type NodeReply } from './node-call.js';
import type { RedlockMaster } from './redlock-masters.js';

/** @internal A master's reply so far: a `pending` one was sent and has not answered yet. */
export type RoundReply<T> = NodeReply<T> | { readonly kind: 'pending' };

/**
 * @internal Sends `command` to every master of `targets` at once and resolves as soon as
 * `decided(replies)` says the outcome cannot change, or when all have answered or timed out.
 * Replies are in the order of `targets`.
 */
export function runRound<T>(
  targets: readonly RedlockMaster[],
  command: (master: RedlockMaster) => Promise<T>,
  timeoutMs: number,
  decided: (replies: readonly RoundReply<T>[]) => boolean = () => false,
): Promise<RoundReply<T>[]> {
  const replies: RoundReply<T>[] = targets.map(() => ({ kind: 'pending' }));
  if (targets.length === 0) return Promise.resolve(replies);
  return new Promise((resolve) => {
    let open = targets.length;
    let done = false;
    targets.forEach((master, i) => {
      void callNode(master, command, timeoutMs).then((reply) => {
        if (done) return;
        replies[i] = reply;
        open--;
        if (open === 0 || decided(replies)) {
          done = true;
          resolve([...replies]);
        }
      });
    });
  });
}

/** @internal Counts of a round's replies by what they prove. */
export interface Tally {
  /** Answered yes (took / renewed / released it for this owner). */
  readonly yes: number;
  /** Answered no (held by another owner, or not ours any more). */
  readonly no: number;
  /** Not answered yet. */
  readonly pending: number;
  /** Will not answer in this round: failed, timed out, or disconnected. */
  readonly unanswered: number;
}

/** @internal */
export function tally<T>(replies: readonly RoundReply<T>[], isYes: (value: T) => boolean): Tally {
  let yes = 0;
  let no = 0;
  let pending = 0;
  for (const reply of replies) {
    if (reply.kind === 'answer') isYes(reply.value) ? yes++ : no++;
    else if (reply.kind === 'pending') pending++;
  }
  return { yes, no, pending, unanswered: replies.length - yes - no - pending };
}

/** @internal How an acquisition round ended, or `undefined` while pending replies could change it. */
type AcquireVerdict = 'quorum' | 'busy' | 'unreachable';

/**
 * @internal A quorum of yes wins. Otherwise the store is "busy" only if at least a quorum of
 * masters answered at all: fewer answers mean the store is down, not that the lock is taken.
 */
export function acquireVerdict(t: Tally, quorum: number): AcquireVerdict | undefined {
  if (t.yes >= quorum) return 'quorum';
  if (t.yes + t.pending >= quorum) return undefined;
  if (t.yes + t.no >= quorum) return 'busy';
  if (t.yes + t.no + t.pending < quorum) return 'unreachable';
  return undefined;
}

/** @internal How a renewal (or a final release) ended over the masters that may hold this owner's key. */
type HoldVerdict = 'held' | 'lost' | 'unknown';

/**
 * @internal `held`: a quorum still had the key for this owner. `lost`: the answers prove that
 * fewer than a quorum had it, even counting every silent master as a yes. `unknown`: too many
 * masters were silent to tell. Undefined while pending replies could change it.
 */
export function holdVerdict(t: Tally, quorum: number): HoldVerdict | undefined {
  if (t.yes >= quorum) return 'held';
  if (t.yes + t.pending + t.unanswered < quorum) return 'lost';
  return t.pending === 0 ? 'unknown' : undefined;
}
