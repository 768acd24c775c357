import type { ZkClient } from './zk-driver.js';

/** The driver's internals this relies on; optional, so it does nothing if a driver version differs. */
interface ReplyParser {
  socket?: { destroy(): void };
  pendingBuffer?: Buffer | null;
  onSocketData?: (this: ReplyParser, data: Buffer) => void;
}

/**
 * node-zookeeper-client (1.1.3) keeps the unparsed tail of a reply across reconnects: when a
 * connection breaks in the middle of a reply, the next connection's handshake answer is parsed
 * behind those stale bytes. It then reads garbage (a session timeout of 0 looks like an expired
 * session) or throws from its socket handler ("Unknown code: ...", alexguan/node-zookeeper-client#70),
 * which kills the process. This drops the stale tail when a new connection starts answering, and
 * turns anything the parser throws into a broken connection, which the driver re-establishes with
 * the same session. Call before `connect()`: the driver binds the parser to each new socket.
 */
export function guardReplyStream(client: ZkClient): void {
  const parser = replyParser(client);
  const parse = parser?.onSocketData;
  if (!parser || !parse) return;
  let socketOfTail: unknown;
  parser.onSocketData = function (data) {
    if (parser.socket !== socketOfTail) {
      socketOfTail = parser.socket;
      parser.pendingBuffer = null;
    }
    try {
      parse.call(parser, data);
    } catch {
      parser.pendingBuffer = null;
      parser.socket?.destroy();
    }
  };
}

/** @internal The driver's reply parser (its connection manager), or undefined if this driver version has none. */
export function replyParser(client: ZkClient): ReplyParser | undefined {
  const parser = (client as unknown as { connectionManager?: ReplyParser }).connectionManager;
  return typeof parser?.onSocketData === 'function' ? parser : undefined;
}
