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
    },
  },
  { files: ['**/*.{js,mjs,cjs}'], extends: [tseslint.configs.disableTypeChecked] },
  eslintPluginPrettierRecommended,
);
