import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** Names this process in owner ids, so an operator looking at the store can tell who holds a lock. */
const processTag = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

/** `hostname:pid`: how this app instance is named to operators unless the module options name it. */
export function defaultInstanceLabel(): string {
  return `${hostname()}:${process.pid}`;
}

/** A fresh owner id for one acquisition: unique across processes and across calls in this process. */
export function newOwnerId(): string {
  return `${processTag}:${randomUUID()}`;
}
