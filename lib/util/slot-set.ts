/** @internal An object that keeps its own place in the one SlotSet it may be in (-1: in none). */
export interface Slotted {
  slot: number;
}

/**
 * @internal A set of objects that carry their place in it: adding and deleting are an array write
 * and a swap, with no hashing. A `Set` that drops to empty frees its table and allocates a new one
 * on the next add; the acquire/release path empties and refills a few sets per lock on an idle engine.
 * Iteration order is not insertion order.
 */
export class SlotSet<T extends Slotted> implements Iterable<T> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  add(item: T): void {
    if (item.slot >= 0) return;
    item.slot = this.items.length;
    this.items.push(item);
  }

  delete(item: T): boolean {
    const index = item.slot;
    if (index < 0 || this.items[index] !== item) return false;
    const last = this.items.pop()!;
    if (last !== item) {
      this.items[index] = last;
      last.slot = index;
    }
    item.slot = -1;
    return true;
  }

  /** The items now, as a list of their own: the set may change while it is read. */
  toArray(): T[] {
    return this.items.slice();
  }

  [Symbol.iterator](): Iterator<T> {
    return this.items[Symbol.iterator]();
  }
}
