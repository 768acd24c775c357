import { describe, expect, it } from '@jest/globals';
import { age, formatTable } from '../../lib/cli/cli-format.js';

describe('the AGE column', () => {
  const now = Date.UTC(2026, 10, 27, 12, 0, 0);

  it.each([
    [0, '0.0s'],
    [8_240, '8.2s'],
    [5 * 60_000 + 2_000, '5m02s'],
    [3 * 3_600_000 + 4 * 60_000 + 59_000, '3h04m'],
    [2 * 86_400_000 + 5 * 3_600_000, '2d05h'],
  ])('%i ms ago is %s', (ms, text) => {
    expect(age(now - ms, now)).toBe(text);
  });

  it('is "-" for a holder with no acquiredAt (older owner ids, SQL owners stored hashed), and 0 for a clock ahead of ours', () => {
    const table = formatTable(
      [
        {
          key: 'k',
          held: true,
          mode: 'exclusive',
          holders: [{ instance: 'old-app' }, { instance: 'skewed', acquiredAt: now + 5_000 }],
        },
      ],
      now,
    );
    const ages = table
      .split('\n')
      .slice(1)
      .map((line) => line.split(/\s{2,}/)[5]);
    expect(ages).toEqual(['-', '0.0s']);
  });
});
