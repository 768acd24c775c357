import { describe, expect, it } from '@jest/globals';
import { SlotSet } from '../../lib/util/slot-set.js';

const item = (name: string) => ({ name, slot: -1 });

describe('SlotSet: a set of objects that keep their own place in it', () => {
  it('adds once, deletes any member (the last one moves into its place), and forgets non-members', () => {
    const set = new SlotSet<ReturnType<typeof item>>();
    const [a, b, c] = [item('a'), item('b'), item('c')];
    set.add(a);
    set.add(b);
    set.add(a);
    set.add(c);
    expect(set.size).toBe(3);
    expect(set.delete(a)).toBe(true);
    expect(a.slot).toBe(-1);
    expect(set.delete(a)).toBe(false);
    expect([...set].map((x) => x.name).sort()).toEqual(['b', 'c']);
    expect(set.delete(c)).toBe(true);
    expect(set.delete(b)).toBe(true);
    expect(set.size).toBe(0);
    set.add(c);
    expect([...set]).toEqual([c]);
  });

  it('refuses to delete an item whose slot points at another member (an item of another set)', () => {
    const set = new SlotSet<ReturnType<typeof item>>();
    const other = new SlotSet<ReturnType<typeof item>>();
    const [a, b] = [item('a'), item('b')];
    set.add(a);
    other.add(b);
    expect(set.delete(b)).toBe(false);
    expect(set.size).toBe(1);
    expect(other.size).toBe(1);
  });

  it('gives a list of its own to read while members come and go', () => {
    const set = new SlotSet<ReturnType<typeof item>>();
    const items = ['a', 'b', 'c', 'd'].map(item);
    for (const x of items) set.add(x);
    const seen: string[] = [];
    for (const x of set.toArray()) {
      seen.push(x.name);
      set.delete(x);
    }
    expect(seen.sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(set.size).toBe(0);
  });
});
