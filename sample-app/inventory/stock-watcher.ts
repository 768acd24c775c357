import { Controller, Get, Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { LeaderService, OnLeadership, type LeaderInfo, type Leadership } from '../../lib/index.js';

/** How often the leader looks at the stock levels. */
const CHECK_EVERY_MS = 1_000;

/**
 * A background duty one instance owns at a time: the leader of 'stock-watcher' checks the stock
 * levels every second (here it only counts its rounds); when it shuts down, another instance takes
 * over at once, with a larger term.
 */
@Injectable()
export class StockWatcher {
  private readonly logger = new Logger(StockWatcher.name);
  rounds = 0;

  @OnLeadership('stock-watcher')
  async watch({ term, signal }: Leadership): Promise<void> {
    this.logger.log(`leading the stock watcher (term ${term})`);
    while (!signal.aborted) {
      this.rounds++;
      await sleep(CHECK_EVERY_MS, undefined, { signal }).catch(() => undefined);
    }
  }
}

/** GET /leadership/stock-watcher: who leads the stock watcher (from any instance) and whether this one does. */
@Controller('leadership')
export class LeadershipController {
  constructor(
    private readonly leaders: LeaderService,
    private readonly watcher: StockWatcher,
  ) {}

  @Get('stock-watcher')
  async stockWatcher(): Promise<{
    leader: LeaderInfo | undefined;
    thisInstance: string;
    leadsHere: boolean;
    roundsHere: number;
  }> {
    return {
      leader: await this.leaders.leader('stock-watcher'),
      thisInstance: this.leaders.instance,
      leadsHere: this.leaders.isLeader('stock-watcher'),
      roundsHere: this.watcher.rounds,
    };
  }
}
