import { Catch, Inject, Injectable, Optional, type ExceptionFilter, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DistributedLockError } from '../../errors.js';
import { LOCK_MODULE_IMPORTED } from '../lock-constants.js';
import { Messages } from '../lock-messages.js';

/** Never thrown: the check catches nothing. */
class NeverThrown {}

/**
 * @internal Fails the bootstrap of an application that has `@Locked()` methods but never imported
 * `DistributedLockModule` (the methods could never lock), rather than its first call. `@Locked()`
 * puts it on the method it decorates as an exception filter: the one kind of enhancer Nest creates
 * when it sets an application up (so it runs this check) that costs nothing per call. It catches nothing.
 */
@Catch(NeverThrown)
@Injectable()
export class LockModuleCheck implements ExceptionFilter, OnModuleInit {
  // A property, not a constructor parameter: nothing to inject by position.
  @Optional() @Inject(ModuleRef) private readonly moduleRef?: ModuleRef;

  onModuleInit(): void {
    if (this.moduleRef === undefined) return;
    try {
      this.moduleRef.get(LOCK_MODULE_IMPORTED, { strict: false });
    } catch {
      throw new DistributedLockError(Messages.moduleNotImported());
    }
  }

  catch(): void {}
}
