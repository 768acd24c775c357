import { describe, expect, it } from '@jest/globals';
import {
  escapeHolderPart,
  holderOwnerId,
  MAX_OWNER_ID_LENGTH,
  ownerIdPrefix,
  parseHolderIdentity,
  unescapeHolderPart,
} from '../../lib/engine/holder-identity.js';

describe('holder identity in owner ids', () => {
  it('round-trips the instance, the label and the time of the claim, and makes every id unique', () => {
    const prefix = ownerIdPrefix('api-1:4242');
    const first = holderOwnerId(prefix, 'order 42 | 100% done', 1_764_200_000_123);
    expect(parseHolderIdentity(first)).toEqual({
      instance: 'api-1:4242',
      label: 'order 42 | 100% done',
      claimedAt: 1_764_200_000_123,
    });
    expect(holderOwnerId(prefix, 'order 42 | 100% done', 1_764_200_000_123)).not.toBe(first);
    expect(parseHolderIdentity(holderOwnerId(prefix, undefined, 5))).toEqual({ instance: 'api-1:4242', claimedAt: 5 });
  });

  it('stamps the claim with the current time when not told one', () => {
    const before = Date.now();
    const { claimedAt } = parseHolderIdentity(holderOwnerId(ownerIdPrefix('api-1'), undefined));
    expect(claimedAt).toBeGreaterThanOrEqual(before);
    expect(claimedAt).toBeLessThanOrEqual(Date.now());
  });

  it('keeps ids printable ASCII and at most MAX_OWNER_ID_LENGTH characters, whatever the instance, label and time', () => {
    expect(MAX_OWNER_ID_LENGTH).toBeLessThanOrEqual(255); // the SQL owner column
    const owner = holderOwnerId(ownerIdPrefix('ü'.repeat(200)), '\u0000\u001b𝄞'.repeat(500), 8.64e15);
    expect(owner.length).toBeLessThanOrEqual(MAX_OWNER_ID_LENGTH);
    expect(parseHolderIdentity(owner).claimedAt).toBe(8.64e15);
    expect(owner).toMatch(/^[\x20-\x7e]+$/);
    const { instance, label } = parseHolderIdentity(owner);
    expect(instance).toMatch(/^ü+$/);
    expect(label!.startsWith('\u0000\u001b𝄞')).toBe(true);
  });

  it('cuts only at whole characters, and decodes anything without throwing', () => {
    expect(escapeHolderPart('éé', 8)).toBe('%C3%A9');
    expect(escapeHolderPart('aé', 6)).toBe('a');
    expect(unescapeHolderPart('%C3')).toBe('\ufffd');
    expect(unescapeHolderPart('%zz%')).toBe('%zz%');
  });

  it("reads the instance and label of an older version's three-part id, without a time", () => {
    expect(parseHolderIdentity('api-1|job%207|0b6e0d9e-8c1f-4a43-9d2e-6a3c6a1f4c1e')).toEqual({
      instance: 'api-1',
      label: 'job 7',
    });
    expect(parseHolderIdentity('api-1||0b6e0d9e-8c1f-4a43-9d2e-6a3c6a1f4c1e|not-a-time')).toEqual({
      instance: 'api-1',
    });
  });

  it('reads nothing from owner ids of other forms (older versions, hashed SQL owners)', () => {
    expect(parseHolderIdentity('host:12:ab12cd:0b6e0d9e-8c1f-4a43-9d2e-6a3c6a1f4c1e')).toEqual({});
    expect(parseHolderIdentity(`sha256:${'a'.repeat(64)}`)).toEqual({});
    expect(parseHolderIdentity(undefined)).toEqual({});
  });
});
