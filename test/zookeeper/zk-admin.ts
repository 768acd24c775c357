import {
  loadZookeeperDriver,
  zkErrorCode,
  ZK_ERROR,
  type ZkAcl,
  type ZkClient,
  type ZkStat,
} from '../../lib/backends/zookeeper/zk-driver.js';
import { lockParentPath } from '../../lib/backends/zookeeper/zk-paths.js';

/** A separate ZooKeeper session for tests: looks at lock nodes and deletes them behind their holders' backs. */
export class ZkAdmin {
  private constructor(private readonly client: ZkClient) {}

  /** Connects, authenticated with `auth` (e.g. `[{ scheme: 'digest', credentials: 'user:password' }]`) if given. */
  static async connect(
    connectionString: string,
    auth: readonly { scheme: string; credentials: string }[] = [],
  ): Promise<ZkAdmin> {
    const driver = await loadZookeeperDriver();
    const client = driver.createClient(connectionString, { sessionTimeout: 5_000 });
    for (const { scheme, credentials } of auth) client.addAuthInfo(scheme, Buffer.from(credentials));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`ZkAdmin could not connect to ${connectionString}`)), 10_000);
      client.on('state', (state) => {
        if (state.code === driver.State.SYNC_CONNECTED.code) {
          clearTimeout(timer);
          resolve();
        }
      });
      client.connect();
    });
    return new ZkAdmin(client);
  }

  /** Children of `path`, or `undefined` when it does not exist. */
  children(path: string): Promise<string[] | undefined> {
    return new Promise((resolve, reject) =>
      this.client.getChildren(path, (error, children) =>
        zkErrorCode(error) === ZK_ERROR.NO_NODE ? resolve(undefined) : error ? reject(error) : resolve(children),
      ),
    );
  }

  stat(path: string): Promise<ZkStat | undefined> {
    return new Promise((resolve, reject) =>
      this.client.getData(path, undefined, (error, _data, stat) =>
        zkErrorCode(error) === ZK_ERROR.NO_NODE ? resolve(undefined) : error ? reject(error) : resolve(stat),
      ),
    );
  }

  /** The node's ACL as `{ scheme, id, permission }` entries (the permission a bit mask: read 1, write 2, create 4, delete 8, admin 16). */
  acl(path: string): Promise<{ scheme: string; id: string; permission: number }[]> {
    const client = this.client as ZkClient & {
      getACL(path: string, callback: (error: Error | null, acls: ZkAcl[]) => void): void;
    };
    return new Promise((resolve, reject) =>
      client.getACL(path, (error, acls) =>
        error
          ? reject(error)
          : resolve(acls.map(({ id, permission }) => ({ scheme: id.scheme, id: id.id, permission }))),
      ),
    );
  }

  mkdirp(path: string): Promise<void> {
    return new Promise((resolve, reject) => this.client.mkdirp(path, (error) => (error ? reject(error) : resolve())));
  }

  remove(path: string): Promise<void> {
    return new Promise((resolve, reject) =>
      this.client.remove(path, -1, (error) =>
        error && zkErrorCode(error) !== ZK_ERROR.NO_NODE ? reject(error) : resolve(),
      ),
    );
  }

  /** The lock nodes queued for `storeKey`, in sequence order. */
  async lockNodes(rootPath: string, storeKey: string): Promise<string[]> {
    const children = (await this.children(lockParentPath(rootPath, storeKey))) ?? [];
    return children.sort((x, y) => Number(x.slice(-10)) - Number(y.slice(-10)));
  }

  /** Deletes the current holder's node (the lowest), as an operator or a lost session would. */
  async deleteHolderNode(rootPath: string, storeKey: string): Promise<void> {
    const [holder] = await this.lockNodes(rootPath, storeKey);
    if (holder) await this.remove(`${lockParentPath(rootPath, storeKey)}/${holder}`);
  }

  /**
   * Expires another client's session, as a long network partition would: a second client takes the
   * session over (the server drops the first one's connection) and closes it. The first client
   * learns on reconnecting that its session expired.
   */
  static async expireSession(
    connectionString: string,
    credentials: { sessionId: Buffer; sessionPassword: Buffer },
  ): Promise<void> {
    const driver = await loadZookeeperDriver();
    const client = driver.createClient(connectionString, { sessionTimeout: 5_000, ...credentials });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('could not take the session over')), 10_000);
      client.on('state', (state) => {
        if (state.code === driver.State.SYNC_CONNECTED.code) client.close();
        if (state.code === driver.State.DISCONNECTED.code) {
          clearTimeout(timer);
          resolve();
        }
      });
      client.connect();
    });
  }

  close(): void {
    this.client.close();
  }
}
