import { LockBackendError } from '../../errors.js';
import { ZK_ERROR, zkErrorCode } from './zk-driver.js';
import type { ZkSession } from './zk-session.js';

/** Tries before giving up on a parent that keeps being deleted and re-created by others. */
const MAX_ROUNDS = 8;

/**
 * Creates a claim's EPHEMERAL_SEQUENTIAL node `<parentPath>/<prefix><seq>` (its data: the owner id,
 * for inspection) and resolves its path.
 * A missing parent is created in the same round trip (one multi). Not bounded in time: the
 * caller bounds its wait but keeps the outcome, since a create may land after its answer was lost.
 */
export async function createLockNode(
  session: ZkSession,
  rootPath: string,
  parentPath: string,
  prefix: string,
  data?: Buffer,
): Promise<string> {
  const path = `${parentPath}/${prefix}`;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    try {
      return await session.createEphemeralSequential(path, data);
    } catch (error) {
      if (zkErrorCode(error) !== ZK_ERROR.NO_NODE) throw error;
    }
    try {
      return await session.createWithParent(parentPath, path, data);
    } catch (error) {
      const code = zkErrorCode(error);
      // NODE_EXISTS: another acquirer made the parent meanwhile; NO_NODE: the root is missing too.
      if (code === ZK_ERROR.NO_NODE) await session.mkdirp(rootPath);
      else if (code !== ZK_ERROR.NODE_EXISTS) throw error;
    }
  }
  throw new LockBackendError('zookeeper', `could not create a lock node under ${parentPath}`);
}

export async function removeIfPresent(session: ZkSession, path: string): Promise<void> {
  try {
    await session.remove(path);
  } catch (error) {
    if (zkErrorCode(error) !== ZK_ERROR.NO_NODE) throw error;
  }
}

/** Deletes a lock parent if it has no children. Atomic on the server (NOT_EMPTY otherwise); an acquirer that loses the race re-creates it. */
export async function removeIfEmpty(session: ZkSession, path: string): Promise<void> {
  try {
    await session.remove(path);
  } catch (error) {
    const code = zkErrorCode(error);
    if (code !== ZK_ERROR.NOT_EMPTY && code !== ZK_ERROR.NO_NODE) throw error;
  }
}
