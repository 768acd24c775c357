import { describe } from '@jest/globals';
import type { SqlTarget } from './sql-target.js';

export function describeSqlScenarios(target: SqlTarget): void {
  describe(`${target.name} SQL scenarios`, () => {});
}
