import { Controller, Get } from '@nestjs/common';
import { LockService } from '../../lib/index.js';
import { RestockJob } from './restock.job.js';

/** What the scheduled jobs of this instance did, for the demo's report. */
@Controller('jobs')
export class JobsController {
  private skipped = 0;

  constructor(
    private readonly restockJob: RestockJob,
    private readonly locks: LockService,
  ) {
    locks.events.subscribe((event) => {
      if (event.type === 'skipped' && event.method === 'RestockJob.restock') this.skipped++;
    });
  }

  @Get('restock')
  restock(): { instance: string; ran: number[]; skipped: number } {
    return { instance: this.locks.instance, ran: [...this.restockJob.ranTicks], skipped: this.skipped };
  }
}
