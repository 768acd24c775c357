import { Catch, ConflictException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { StaleFenceException } from '../../lib/index.js';

/**
 * On the HTTP controllers that write fenced values: a write refused by the store's fence guard
 * answers 409 Conflict (the holder lost its lock and a newer holder wrote first; the client may
 * retry). The library already answers 409 (`StaleFenceException`, the `StaleFenceError` as its
 * `cause`); this filter words the answer for the sample's clients.
 */
@Catch(StaleFenceException)
export class StaleFenceFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: StaleFenceException, host: ArgumentsHost): void {
    const conflict = new ConflictException(
      `${exception.resource}: fence ${exception.fence} is older than ${exception.highest}; this holder lost its lock, nothing was written`,
    );
    this.adapterHost.httpAdapter.reply(host.switchToHttp().getResponse(), conflict.getResponse(), conflict.getStatus());
  }
}
