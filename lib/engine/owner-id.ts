import { hostname } from 'node:os';

/** `hostname:pid`: how this app instance is named to operators unless the module options name it. */
export function defaultInstanceLabel(): string {
  return `${hostname()}:${process.pid}`;
}
