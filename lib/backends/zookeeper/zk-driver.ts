import { loadOptional } from '../../util/load-optional.js';

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

/** An ACL identity (`scheme:id`), built with the driver's own `Id` class (its `ACL` checks `instanceof`). */
interface ZkId {
  readonly scheme: string;
  readonly id: string;
}

/** One ACL entry: a permission bit mask for an identity. */
export interface ZkAcl {
  readonly permission: number;
  readonly id: ZkId;
}
type Callback<T = void> = (error: Error | null, result: T) => void;

interface ZkTransaction {
  check(path: string, version?: number): ZkTransaction;
  create(path: string, data: Buffer, acls: readonly ZkAcl[], mode: number): ZkTransaction;
  commit(callback: Callback<{ readonly path?: string }[]>): void;
}

export interface ZkClient {
  connect(): void;
  close(): void;
  on(event: 'state', listener: (state: ZkState) => void): void;
  getSessionTimeout(): number;
  getSessionId(): Buffer;
  getSessionPassword(): Buffer;
  /** Kept by the client and sent again on every reconnect of this session. */
  addAuthInfo(scheme: string, auth: Buffer): void;
  create(path: string, data: Buffer, acls: readonly ZkAcl[], mode: number, callback: Callback<string>): void;
  remove(path: string, version: number, callback: Callback): void;
  getData(
    path: string,
    watcher: ZkWatcher | undefined,
    callback: (error: Error | null, data: Buffer, stat: ZkStat) => void,
  ): void;
  getChildren(path: string, callback: Callback<string[]>): void;
  mkdirp(path: string, callback: Callback<string>): void;
  mkdirp(path: string, acls: readonly ZkAcl[], callback: Callback<string>): void;
  transaction(): ZkTransaction;
}

export interface ZkDriver {
  createClient(
    connectionString: string,
    options: {
      sessionTimeout: number;
      spinDelay?: number;
      retries?: number;
      sessionId?: Buffer;
      sessionPassword?: Buffer;
    },
  ): ZkClient;
  readonly CreateMode: { readonly PERSISTENT: number; readonly EPHEMERAL_SEQUENTIAL: number };
  readonly State: Record<'SYNC_CONNECTED' | 'DISCONNECTED' | 'EXPIRED' | 'AUTH_FAILED', ZkState>;
  readonly ACL: {
    new (permission: number, id: ZkId): ZkAcl;
    readonly OPEN_ACL_UNSAFE: readonly ZkAcl[];
    readonly CREATOR_ALL_ACL: readonly ZkAcl[];
  };
  readonly Id: new (scheme: string, id: string) => ZkId;
  readonly Permission: Record<'READ' | 'WRITE' | 'CREATE' | 'DELETE' | 'ADMIN' | 'ALL', number>;
}

/** ZooKeeper's error codes (KeeperException.Code) that this backend tells apart. */
export const ZK_ERROR = {
  CONNECTION_LOSS: -4,
  NO_NODE: -101,
  NO_AUTH: -102,
  NODE_EXISTS: -110,
  NOT_EMPTY: -111,
  SESSION_EXPIRED: -112,
  INVALID_ACL: -114,
  AUTH_FAILED: -115,
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
  const module = await loadOptional<ZkDriver & { default?: ZkDriver }>(
    'node-zookeeper-client',
    "The 'zookeeper' backend",
  );
  return module.default ?? module;
}
