/** A Deno KV file in a fresh directory under /tmp, for the KV budget tests. */

/** A KV file's place; `remove()` deletes its directory. */
export interface KvFile extends AsyncDisposable {
  /** The file's path (`Deno.openKv(path)`). */
  readonly path: string;
  /** The directory it is in. */
  readonly dir: string;
  /** Deletes the directory (close every `Deno.Kv` on the file first). */
  remove(): Promise<void>;
}

/** A fresh directory under /tmp and the path of a KV file in it (not created yet). */
export async function kvFile(): Promise<KvFile> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "apf-kv-" });
  const remove = () => Deno.remove(dir, { recursive: true });
  return { path: `${dir}/budgets.sqlite3`, dir, remove, [Symbol.asyncDispose]: remove };
}
