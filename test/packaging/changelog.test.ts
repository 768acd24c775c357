import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('CHANGELOG.md', () => {
  const changelog = read('CHANGELOG.md');
  const versions = [...changelog.matchAll(/^## \[([^\]]+)\]/gm)].map((m) => m[1]);

  it("starts with Unreleased, and its newest version is package.json's", () => {
    expect(versions[0]).toBe('Unreleased');
    expect(versions[1]).toBe(JSON.parse(read('package.json')).version);
  });

  it('speaks to users: no contract file, issue numbers or rounds of work', () => {
    expect(changelog).not.toMatch(/API\.md|\bissue \d|\brounds? of (work|the project)|\bthe round\b/i);
  });
});
