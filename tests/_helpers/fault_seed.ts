/** The seed of a randomized fault run, so that a failing run can be tried again. */

/**
 * `APF_FAULT_SEED` when the test may read it (run with
 * `--allow-env=APF_FAULT_SEED` and `APF_FAULT_SEED=n`), else (or when it is
 * empty) `defaultSeed`.
 *
 * @throws {TypeError} when it is set to something other than an integer.
 */
export function faultSeed(defaultSeed: number): number {
  const granted = Deno.permissions.querySync({ name: "env", variable: "APF_FAULT_SEED" });
  if (granted.state !== "granted") return defaultSeed;
  const raw = Deno.env.get("APF_FAULT_SEED")?.trim();
  if (raw === undefined || raw === "") return defaultSeed;
  const seed = Number(raw);
  if (!Number.isInteger(seed)) {
    throw new TypeError(`APF_FAULT_SEED must be an integer, got ${JSON.stringify(raw)}`);
  }
  return seed >>> 0;
}
