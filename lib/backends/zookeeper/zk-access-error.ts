import { LockBackendError } from '../../errors.js';
import { ZK_ERROR, zkErrorCode } from './zk-driver.js';

/**
 * A driver error that means "not allowed" (NO_AUTH, INVALID_ACL, AUTH_FAILED) as a LockBackendError
 * that says which option to check; any other error is returned unchanged. Never names a credential.
 */
export function explainAccessError(error: unknown, session: { readonly authFailed: boolean }, what: string): unknown {
  // The driver fails the requests it had sent with CONNECTION_LOSS when the server drops a rejected session.
  if (session.authFailed) return new LockBackendError('zookeeper', AUTH_FAILED_MESSAGE, { cause: error });
  switch (zkErrorCode(error)) {
    case ZK_ERROR.NO_AUTH:
      return new LockBackendError(
        'zookeeper',
        `ZooKeeper refused ${what} (NO_AUTH): the ACL of the node (or of its parent) does not grant this backend's identity; check the auth and acl options (existing nodes keep the ACL they were created with)`,
        { cause: error },
      );
    case ZK_ERROR.INVALID_ACL:
      return new LockBackendError(
        'zookeeper',
        `ZooKeeper refused the acl option for ${what} (INVALID_ACL): an id is malformed, or the ACL names the session's ids and the session has none`,
        { cause: error },
      );
    case ZK_ERROR.AUTH_FAILED:
      return new LockBackendError('zookeeper', AUTH_FAILED_MESSAGE, { cause: error });
    default:
      return error;
  }
}

/** Why a session ends when the server rejects its `auth`. */
export const AUTH_FAILED_MESSAGE =
  'ZooKeeper rejected the auth option (AUTH_FAILED): is each scheme enabled on the server?';
