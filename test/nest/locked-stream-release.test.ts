import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Controller, Get, Logger, Param, StreamableFile, type INestApplication } from '@nestjs/common';
import { Readable } from 'node:stream';
import request from 'supertest';
import { DistributedLockModule, Locked, LockService, MemoryBackend, type LockEvent } from '../../lib/index.js';
import type { ClaimRequest, LockBackend, LockClaim } from '../../lib/backend.js';
import { PLATFORMS, startHttpApp } from './http-platform.js';
import { nextEvent } from './nest-test-kit.js';

/** A memory store whose releases fail (as an unreachable store's would) while `failing` is set. */
class FailingReleaseBackend implements LockBackend {
  readonly name = 'failing-release';
  readonly store = new MemoryBackend();
  failing = false;

  claim(request: ClaimRequest): LockClaim {
    const claim = this.store.claim(request);
    return {
      tryAcquire: () => claim.tryAcquire(),
      waitForChange: (maxMs, signal) => claim.waitForChange(maxMs, signal),
      renew: (leaseMs) => claim.renew(leaseMs),
      release: (holdMs) =>
        this.failing ? Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:6379')) : claim.release(holdMs),
    };
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

@Controller('files')
class FilesController {
  @Get(':id')
  @Locked({ key: 'file:{params.id}', waitMs: 0 })
  download(@Param('id') id: string): StreamableFile {
    return new StreamableFile(Readable.from([`file ${id}`]), { type: 'text/plain' });
  }
}

describe.each(PLATFORMS)('a release that fails after a streamed response on %s', (platform) => {
  const backend = new FailingReleaseBackend();
  let app: INestApplication;
  let locks: LockService;

  beforeAll(async () => {
    app = await startHttpApp(platform, {
      imports: [DistributedLockModule.forRoot({ backend })],
      controllers: [FilesController],
    });
    locks = app.get(LockService);
  });
  afterEach(() => {
    backend.failing = false;
    jest.restoreAllMocks();
  });
  afterAll(() => app.close());

  it('is a release-failed event and a warning, not silence; the client got the whole body', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    backend.failing = true;
    const failed = nextEvent(locks, (event) => event.type === 'release-failed');
    await request(app.getHttpServer()).get('/files/1').expect(200, 'file 1');
    const event = (await failed) as Extract<LockEvent, { type: 'release-failed' }>;
    expect(event).toMatchObject({ key: 'file:1', backend: 'failing-release', store: 'default' });
    expect(event.error.name).toBe('LockBackendError');
    expect(event.error.message).toContain('ECONNREFUSED');
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/^Lock "file:1" \(fence \d+\) could not be released: .*ECONNREFUSED.*lease lapses$/),
    );
  });

  it('a release that works emits no release-failed event', async () => {
    const events: LockEvent['type'][] = [];
    const subscription = locks.events.subscribe((event) => events.push(event.type));
    const released = nextEvent(locks, (event) => event.type === 'released' && event.key === 'file:2');
    await request(app.getHttpServer()).get('/files/2').expect(200, 'file 2');
    await released;
    subscription.unsubscribe();
    expect(events).toEqual(['acquired', 'released']);
  });
});
