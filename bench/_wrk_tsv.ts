/**
 * The TSV the wrk scripts write (`round variant req_per_s p50_us p99_us
 * non2xx`, then for `bench/gateway_nginx.sh` the server's `user_us sys_us`
 * per request; a line per measurement), read for their summaries: per
 * variant the measurements, per round and variant the req/s, and the median.
 *
 * @module
 */

/** One variant's measurements over the rounds. */
export interface VariantRuns {
  rps: number[];
  p50: number[];
  p99: number[];
  bad: number;
  /** The server's CPU time per request, user and system, in µs (empty when not measured). */
  user: number[];
  sys: number[];
}

/** The file's measurements by variant, and req/s by `round\tvariant`. */
export function readWrkTsv(
  file: string,
): { byVariant: Map<string, VariantRuns>; byRound: Map<string, number> } {
  const rows = Deno.readTextFileSync(file).trim().split("\n").slice(1).map((l) => l.split("\t"));
  const byVariant = new Map<string, VariantRuns>();
  const byRound = new Map<string, number>();
  for (const [round, v, rps, p50, p99, bad, user, sys] of rows) {
    byRound.set(`${round}\t${v}`, Number(rps));
    const e = byVariant.get(v!) ?? { rps: [], p50: [], p99: [], bad: 0, user: [], sys: [] };
    if (user !== undefined && sys !== undefined) {
      e.user.push(Number(user));
      e.sys.push(Number(sys));
    }
    e.rps.push(Number(rps));
    e.p50.push(Number(p50));
    e.p99.push(Number(p99));
    e.bad += Number(bad);
    byVariant.set(v!, e);
  }
  return { byVariant, byRound };
}

/** The median of `xs`. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
