import { describe, expect, it } from '@jest/globals';
import { escapeHolderPart, holderOwnerId, ownerIdPrefix, parseHolderIdentity, unescapeHolderPart } from '../../lib/engine/holder-identity.js';

describe('holder identity in owner ids', () => {
  it('round-trips the instance and the label, and makes every id unique', () => {
    const prefix = ownerIdPrefix('api-1:4242');
    const first = holderOwnerId(prefix, 'order 42 | 100% done');
    expect(parseHolderIdentity(first)).toEqual({ instance: 'api-1:4242', label: 'order 42 | 100% done' });
    expect(holderOwnerId(prefix, 'order 42 | 100% done')).not.toBe(first);
    expect(parseHolderIdentity(holderOwnerId(prefix, undefined))).toEqual({ instance: 'api-1:4242' });
  });

  it('keeps ids printable ASCII and at most 200 characters, whatever the instance and label', () => {
    const owner = holderOwnerId(ownerIdPrefix('ü'.repeat(200)), '\u0000\u001b𝄞'.repeat(500));
    expect(owner.length).toBeLessThanOrEqual(200);
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

  it('reads nothing from owner ids of other forms (older versions, hashed SQL owners)', () => {
    expect(parseHolderIdentity('host:12:ab12cd:0b6e0d9e-8c1f-4a43-9d2e-6a3c6a1f4c1e')).toEqual({});
    expect(parseHolderIdentity(`sha256:${'a'.repeat(64)}`)).toEqual({});
    expect(parseHolderIdentity(undefined)).toEqual({});
  });
});
