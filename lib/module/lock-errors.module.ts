import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { LockErrorsInterceptor } from '../nest/lock-errors.interceptor.js';

/**
 * @internal Imported by every store's `DistributedLockModule`: a static module, so Nest makes one
 * per application however many stores import it, and its application-wide interceptor is
 * registered once.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [{ provide: APP_INTERCEPTOR, useClass: LockErrorsInterceptor }],
})
export class LockErrorsModule {}
