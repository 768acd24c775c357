import { loadDriver } from '../load-driver.js';

// The parts of node-zookeeper-client (which ships no types) this backend uses. Internal: never exported from the package root.

export interface ZkStat {
  readonly czxid: Buffer;
}

export interface ZkState {
  readonly name: string;
  readonly code: number;
}

export interface ZkWatchEvent {
  getType(): number;
  getPath(): string;
}

export type ZkWatcher = (event: ZkWatchEvent) => void;
type Callback<T = void> = (error: Error | null, result: T) => void;

export interface ZkTransaction {
  check(path: string, version?: number): ZkTransaction;
  create(path: string, data: Buffer, mode: number): ZkTransaction;
  commit(callback: Callback<{ readonly path?: string }[]>): void;
}

export interface ZkClient {
  connect(): void;
  close(): void;
  on(event: 'state', listener: (state: ZkState) => void): void;
  getSessionTimeout(): number;
  getSessionId(): Buffer;
  getSessionPassword(): Buffer;
  create(path: string, data: Buffer, mode: number, callback: Callback<string>): void;
  remove(path: string, version: number, callback: Callback): void;
  getData(path: string, watcher: ZkWatcher | undefined, callback: (error: Error | null, data: Buffer, stat: ZkStat) => void): void;
  getChildren(path: string, callback: Callback<string[]>): void;
  mkdirp(path: string, callback: Callback<string>): void;
  transaction(): ZkTransaction;
}

export interface ZkDriver {
  createClient(connectionString: string, options: { sessionTimeout: number; spinDelay?: number; retries?: number; sessionId?: Buffer; sessionPassword?: Buffer }): ZkClient;
  readonly CreateMode: { readonly PERSISTENT: number; readonly EPHEMERAL_SEQUENTIAL: number };
  readonly State: Record<'SYNC_CONNECTED' | 'DISCONNECTED' | 'EXPIRED' | 'AUTH_FAILED', ZkState>;
}

/** ZooKeeper's error codes (KeeperException.Code) that this backend tells apart. */
export const ZK_ERROR = {
  CONNECTION_LOSS: -4,
  NO_NODE: -101,
  NODE_EXISTS: -110,
  NOT_EMPTY: -111,
  SESSION_EXPIRED: -112,
} as const;

/** Watch event type of a deleted node. */
export const NODE_DELETED = 2;

/** The ZooKeeper error code of a driver error, if it is one. */
export function zkErrorCode(error: unknown): number | undefined {
  const getCode = (error as { getCode?: () => unknown } | null)?.getCode;
  if (typeof getCode !== 'function') return undefined;
  const code = getCode.call(error);
  return typeof code === 'number' ? code : undefined;
}

/** Imports node-zookeeper-client (CommonJS) lazily, or names the package to install. */
export async function loadZookeeperDriver(): Promise<ZkDriver> {
  const module = await loadDriver<ZkDriver & { default?: ZkDriver }>('node-zookeeper-client', 'zookeeper');
  return module.default ?? module;
}
