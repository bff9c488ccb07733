/**
 * Fair queuing: shuffle sharding (and, later, queue sets).
 *
 * `requiredEntropyBits` and `MAX_HASH_BITS` are exported once, from the
 * configuration model, which must not import this room.
 *
 * @module
 */

export { type DealCallback, Dealer, MAX_DECK_SIZE } from "./shuffle_shard.ts";
