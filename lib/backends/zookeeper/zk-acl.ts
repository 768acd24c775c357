import type { ZkAcl, ZkDriver } from './zk-driver.js';
import type { ZookeeperAcl, ZookeeperPermission } from './zookeeper-options.js';

const PERMISSION_NAMES: Record<ZookeeperPermission, 'READ' | 'WRITE' | 'CREATE' | 'DELETE' | 'ADMIN' | 'ALL'> = {
  read: 'READ',
  write: 'WRITE',
  create: 'CREATE',
  delete: 'DELETE',
  admin: 'ADMIN',
  all: 'ALL',
};

/**
 * The driver's ACL list for the `acl` option: the one place that builds ACL and Id objects.
 * `'creator'` is ZooKeeper's CREATOR_ALL_ACL (scheme `auth`): the server replaces it with the
 * session's authenticated ids, e.g. `digest:user:base64(sha1(user:password))`.
 */
export function driverAcl(driver: ZkDriver, acl: ZookeeperAcl): readonly ZkAcl[] {
  if (acl === 'open') return driver.ACL.OPEN_ACL_UNSAFE;
  if (acl === 'creator') return driver.ACL.CREATOR_ALL_ACL;
  return acl.map((entry) => {
    const mask = entry.permissions.reduce((bits, name) => bits | driver.Permission[PERMISSION_NAMES[name]], 0);
    return new driver.ACL(mask, new driver.Id(entry.scheme, entry.id));
  });
}
