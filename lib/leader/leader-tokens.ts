import { Inject } from '@nestjs/common';
import { isDefaultStore } from '../nest/store/lock-store-tokens.js';
import { LeaderService } from './leader-service.js';

/** Injection token of the `LeaderService` of the store `name`: the `LeaderService` class itself for the default (unnamed) store. */
export function getLeaderServiceToken(name?: string): string | typeof LeaderService {
  return isDefaultStore(name) ? LeaderService : `DistributedLeaderService:${name}`;
}

/**
 * Injects the `LeaderService` of a named store; without a name, the default store's (the same as
 * injecting `LeaderService`).
 */
export const InjectLeaderService = (name?: string): ParameterDecorator & PropertyDecorator =>
  Inject(getLeaderServiceToken(name));
