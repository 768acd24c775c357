import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('README.md, the front page', () => {
  const readme = read('README.md');
  const lines = readme.split('\n');

  it('stays a front page: at most 350 lines, the install command within the first 60', () => {
    expect(lines.length).toBeLessThanOrEqual(350);
    expect(lines.slice(0, 60).join('\n')).toContain('npm install nestjs-distributed-lock');
  });

  it('names the demo and full-test commands that package.json defines and CI runs', () => {
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    expect(readme).toContain('npm run demo');
    expect(readme).toContain('npm run test:full');
    expect(scripts.demo).toBeDefined();
    expect(scripts['test:full']).toBeDefined();
    expect(read('.ci/run')).toMatch(/^npm run test:full\b/m);
  });
});
