/**
 * Lists whose items know their index: an item is added at the end and
 * removed in constant time by moving the last item into its place (the
 * order is not kept). For things added and removed on every request, where a
 * `Set` of objects calls into V8's runtime on each add and delete.
 *
 * @module
 */

/** An item of a slot list: its index there, `-1` while in none. It is in one list at a time. */
export interface Slotted {
  slot: number;
}

/**
 * Adds `item` at the end of `list`, unless it is there already.
 *
 * @example
 * ```ts
 * import { addSlotted } from "./slot_list.ts";
 * const list: { slot: number }[] = [];
 * const item = { slot: -1 };
 * addSlotted(list, item); // true
 * addSlotted(list, item); // false
 * item.slot; // 0
 * ```
 */
export function addSlotted<T extends Slotted>(list: T[], item: T): boolean {
  // A slot of -1 is not read: an array read at a negative index is a named property's look-up
  // through the prototypes, about 100 ns on V8 against a few for an element.
  const slot = item.slot;
  if (slot >= 0 && list[slot] === item) return false;
  item.slot = list.length;
  list.push(item);
  return true;
}

/**
 * Removes `item` from `list`, the last item taking its place; `false` when
 * it was not there.
 *
 * @example
 * ```ts
 * import { addSlotted, removeSlotted } from "./slot_list.ts";
 * const a = { slot: -1 }, b = { slot: -1 };
 * const list = [a, b];
 * a.slot = 0;
 * b.slot = 1;
 * removeSlotted(list, a); // true
 * list; // [b]
 * b.slot; // 0
 * ```
 */
export function removeSlotted<T extends Slotted>(list: T[], item: T): boolean {
  const slot = item.slot;
  if (slot < 0 || list[slot] !== item) return false;
  const last = list.pop()!;
  if (last !== item) {
    list[slot] = last;
    last.slot = slot;
  }
  item.slot = -1;
  return true;
}
