/** The requests of the coordinator benchmarks: one level `bench`, 1,024 well-spread flows. */

/** A splitmix32-style mix, for flow hashes spread over every queue. */
const mix = (x: number) => {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
};

/** 1,024 requests of level `bench`, each its own flow (hash and distinguisher). */
export const BENCH_REQUESTS = Array.from({ length: 1024 }, (_, i) => ({
  priorityLevel: "bench",
  flowSchema: "bench",
  flowHash: { hi: mix(2 * i + 1), lo: mix(2 * i + 2) },
  distinguisher: `user-${i}`,
}));
