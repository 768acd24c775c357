import { afterAll, beforeAll } from '@jest/globals';
import { describeSqlIdleRows } from '../sql/sql-idle-rows.js';
import { describeSqlMultiProcess } from '../sql/sql-multiprocess.js';
import { describeSqlOutages } from '../sql/sql-outages.js';
import { describeSqlScenarios } from '../sql/sql-scenarios.js';
import { postgresTarget } from '../sql/postgres-target.js';
import { describeBackendContract } from './backend-contract.js';
import { describeInspectionContract } from './inspection-contract.js';
import { describeHoldBoundsContract } from './hold-bounds-contract.js';

// One PostgreSQL 15 server for this file: the file holds a start of its own, so the contract
// suite's stop does not end the server before the SQL scenarios run.
const target = postgresTarget();
beforeAll(() => target.start(), 60_000);
afterAll(() => target.stop(), 60_000);

describeBackendContract(target);
describeInspectionContract(target, { leases: true, holderFence: true, waiters: false, semaphores: false });
describeSqlScenarios(target);
describeSqlMultiProcess(target);
describeSqlIdleRows(target);
describeSqlOutages(target);
describeHoldBoundsContract(target);
