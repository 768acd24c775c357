import { Catch, ConflictException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { StaleFenceError } from '../../lib/index.js';

/**
 * On the HTTP controllers that write fenced values: a write refused by the store's fence guard
 * answers 409 Conflict (the holder lost its lock and a newer holder wrote first; the client may
 * retry), not 500.
 */
@Catch(StaleFenceError)
export class StaleFenceFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: StaleFenceError, host: ArgumentsHost): void {
    const conflict = new ConflictException(`${error.resource}: fence ${error.fence} is older than ${error.highest}; this holder lost its lock, nothing was written`);
    this.adapterHost.httpAdapter.reply(host.switchToHttp().getResponse(), conflict.getResponse(), conflict.getStatus());
  }
}
