// dist/cjs holds CommonJS files while the package root is "type": "module".
import { writeFileSync } from 'node:fs';
writeFileSync('dist/cjs/package.json', JSON.stringify({ type: 'commonjs' }) + '\n');
