import type { DynamicModule, Provider } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { LockEngine } from '../engine/lock-engine.js';
import { getLockEngineToken } from '../nest/store/lock-store-tokens.js';
import { LeaderService } from './leader-service.js';
import { getLeaderServiceToken } from './leader-tokens.js';
import { LeadershipExplorer } from './leadership-explorer.js';

/** Leader election on the store `name`: its `LeaderService` (exported) and the explorer that starts `@OnLeadership()` campaigns. */
export function leaderProviders(name: string): {
  providers: Provider[];
  exports: NonNullable<DynamicModule['exports']>;
} {
  const leaderToken = getLeaderServiceToken(name);
  const providers: Provider[] = [
    {
      provide: leaderToken,
      useFactory: (engine: LockEngine) => new LeaderService(engine),
      inject: [getLockEngineToken(name)],
    },
    {
      provide: `DistributedLeadershipExplorer:${name}`,
      useFactory: (discovery: DiscoveryService, engine: LockEngine, leaders: LeaderService) =>
        new LeadershipExplorer(discovery, name, engine, leaders),
      inject: [DiscoveryService, getLockEngineToken(name), leaderToken],
    },
  ];
  return { providers, exports: [leaderToken] };
}
