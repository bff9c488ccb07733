/**
 * Shuffle-sharding benchmarks: one deal per iteration, through the BigInt
 * API and through the two-halves fast path, for the suggested levels'
 * 128/6 (workload, global-default) and a 64/8 deck. Run with `deno task bench`.
 */

import { Dealer } from "../src/fairqueuing/shuffle_shard.ts";

// hashFlowID values of real flows, so the deals walk realistic 64-bit hashes.
const HASHES: readonly bigint[] = [
  8462628243316140706n,
  17644606172554983095n,
  18422507136572196352n,
  4467590379269162614n,
  9267409685745014192n,
  8967139723188866340n,
  11657850540737501994n,
  12345678901234567n,
];
const HIS: readonly number[] = HASHES.map((h) => Number(h >> 32n));
const LOS: readonly number[] = HASHES.map((h) => Number(h & 0xffffffffn));
const MASK = HASHES.length - 1;

for (const [deck, hand] of [[128, 6], [64, 8]] as const) {
  const dealer = new Dealer(deck, hand);
  const group = `deal ${deck}/${hand}`;
  const out = new Int32Array(hand);
  // Consume the cards the way a queue set would: keep the smallest.
  let sink = 0;
  const pick = (card: number) => {
    if (card < sink) sink = card;
  };
  let i = 0;

  Deno.bench(`${group} deal(bigint, pick)`, { group, baseline: true }, () => {
    dealer.deal(HASHES[i++ & MASK]!, pick);
  });
  Deno.bench(`${group} dealFromHalves(hi, lo, pick)`, { group }, () => {
    const k = i++ & MASK;
    dealer.dealFromHalves(HIS[k]!, LOS[k]!, pick);
  });
  Deno.bench(`${group} dealIntoHand(bigint, Int32Array)`, { group }, () => {
    dealer.dealIntoHand(HASHES[i++ & MASK]!, out);
  });
  Deno.bench(`${group} dealIntoHandFromHalves(hi, lo, Int32Array)`, { group }, () => {
    const k = i++ & MASK;
    dealer.dealIntoHandFromHalves(HIS[k]!, LOS[k]!, out);
  });
}
