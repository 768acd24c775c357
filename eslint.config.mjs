// @ts-check
// ESLint as the Nest ecosystem sets it up (the Nest application starter, nestjs/nest): ESLint's and
// typescript-eslint's recommended rules, type-checked, and Prettier's formatting as a rule. JavaScript
// files (.mjs, .js: scripts, benchmarks, test workers) are in no tsconfig, so they get the rules that
// need no types. `npm run lint`.
import eslint from '@eslint/js';
import eslintPluginPrettierRecommended from 'eslint-plugin-prettier/recommended';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores([
    'dist/',
    '.build/',
    'docs/',
    'coverage/',
    '.test-results/',
    'test/packaging/fixtures/',
    'bench/nest/node_modules/',
    // bench:nest's copies of the builds it runs (bench/nest/.gitignore).
    'bench/nest/.lib/',
  ]),
  {
    extends: [eslint.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      globals: { ...globals.node, ...globals.jest },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-floating-promises': 'warn',
      '@typescript-eslint/no-unsafe-argument': 'warn',
      // A parameter Nest reads through its decorators (@Param() _id) or a field left out of a rest
      // (const { a: _a, ...rest }) is named with a leading underscore: unused on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // An async function without await still returns a promise and turns a throw into a rejection:
      // stores implement the promise-returning LockBackend methods that way (memory), and a bad
      // argument must reject, not throw. Dropping `async` to please the rule would change behaviour.
      '@typescript-eslint/require-await': 'off',
      // Nest's own types name classes and methods `Function` (metadata targets, `Type`, decorators);
      // the Nest layer takes and passes them as Nest gives them.
      '@typescript-eslint/no-unsafe-function-type': 'off',
      // Methods are passed on where they do not use `this` (event handlers, a driver's functions,
      // jest's expect(object.method)); `this: void` on each would be noise without a bug behind it.
      '@typescript-eslint/unbound-method': 'off',
      // A rejection passes on what the store, the driver or the user's code threw, as it was.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // `cond ? a++ : b++` and `ok && go()` as statements are kept where they read as one step.
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      // A variable read by a callback before its one assignment (a server's connection handler that
      // uses the server) must stay `let`: `const` there would be read before it is set.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Tests read what comes back untyped (JSON bodies, worker messages, drivers' private parts):
    // `any` there is the point, so the rules that follow `any` stay quiet in tests.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  { files: ['**/*.{js,mjs,cjs}'], extends: [tseslint.configs.disableTypeChecked] },
  eslintPluginPrettierRecommended,
);
