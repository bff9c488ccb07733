/** The seed of a randomized fault run, so that a failing run can be tried again. */

/**
 * `APF_FAULT_SEED` when the test may read it (run with
 * `--allow-env=APF_FAULT_SEED` and `APF_FAULT_SEED=n`), else `defaultSeed`.
 */
export function faultSeed(defaultSeed: number): number {
  const granted = Deno.permissions.querySync({ name: "env", variable: "APF_FAULT_SEED" });
  if (granted.state !== "granted") return defaultSeed;
  const raw = Deno.env.get("APF_FAULT_SEED");
  return raw === undefined ? defaultSeed : Number(raw) >>> 0;
}
