/** `npm run test:unit`: the test files that need no server and no build (scripts/unit-tests.mjs picks them), run from lib/ through ts-jest. */
import base from './jest.config.js';
import { unitTestFiles } from './scripts/unit-tests.mjs';

export default { ...base, globalSetup: undefined, testMatch: unitTestFiles().map((file) => `<rootDir>/${file}`) };
