/**
 * Ledgers over HTTP: the client and the handler together (the client's
 * `fetch` calls the handler in process), and what the handler refuses.
 */

import assert from "node:assert/strict";
import { HttpBudgetStore } from "../../src/budgets/http_store.ts";
import { budgetStoreHandler } from "../../src/budgets/http_store_handler.ts";
import { MemoryBudgetStore } from "../../src/budgets/memory_store.ts";
import { StoreRefusedError } from "../../src/budgets/store.ts";
import { budgetStoreConformance } from "../_helpers/budget_store_conformance.ts";

const TOKEN = "0123456789abcdef-budgets";

function serve(memory = new MemoryBudgetStore()) {
  const handler = budgetStoreHandler(memory, {
    authorize: (r) => r.headers.get("Authorization") === `Bearer ${TOKEN}`,
  });
  const fetch = async (request: Request) =>
    (await handler(request)) ?? new Response("not here\n", { status: 404 });
  return { memory, handler, fetch };
}

budgetStoreConformance("HTTP", () => {
  const { fetch } = serve();
  return {
    store: new HttpBudgetStore("http://store.test/budgets", { token: TOKEN, fetch }),
    close() {},
  };
});

Deno.test("HTTP store: a wrong token is a refused credential, naming the store, never the token", async () => {
  const { fetch } = serve();
  const store = new HttpBudgetStore("http://store.test/budgets/", { token: "wrong-token", fetch });
  const error = await store.read("x").catch((e) => e);
  assert.ok(error instanceof StoreRefusedError);
  assert.match(error.message, /http:\/\/store\.test\/budgets refused/);
  assert.doesNotMatch(error.message, /wrong-token/);
  await assert.rejects(store.write("x", null, { holders: {} }), StoreRefusedError);
});

Deno.test("HTTP store: URLs are checked; credentials go in the token, not the URL", () => {
  assert.throws(() => new HttpBudgetStore("ws://x/budgets"), /expected an http: or https: URL/);
  assert.throws(() => new HttpBudgetStore("not a url"), /invalid URL/);
  assert.throws(() => new HttpBudgetStore("http://u:p@x/budgets"), /options.token/);
});

Deno.test("HTTP store: the handler refuses what is not a conditional write of a ledger", async () => {
  const { handler, memory } = serve();
  const auth = { Authorization: `Bearer ${TOKEN}` };
  const put = (headers: Record<string, string>, body: string) =>
    handler(
      new Request("http://s/budgets/work", {
        method: "PUT",
        headers: { ...auth, ...headers },
        body,
      }),
    )!;
  assert.equal((await put({}, "{}")).status, 428, "no precondition");
  assert.equal((await put({ "If-Match": "v1" }, "{}")).status, 400, "an unquoted version");
  const bad = await put({ "If-None-Match": "*" }, '{"holders":{"a":{"claim":-1}}}');
  assert.equal(bad.status, 400);
  assert.match(await bad.text(), /not a budget ledger at holders\.a\.claim/);
  assert.equal((await put({ "If-None-Match": "*" }, "not json")).status, 400);
  assert.equal(memory.peek("work"), null, "nothing was written");
  const del = await handler(
    new Request("http://s/budgets/work", { method: "DELETE", headers: auth }),
  )!;
  assert.equal(del.status, 405);
  assert.equal(handler(new Request("http://s/other")), null, "outside the prefix");
  const unauthorized = await handler(new Request("http://s/budgets/work"))!;
  assert.equal(unauthorized.status, 401);
  assert.throws(() => budgetStoreHandler(memory, {} as never), /authorize must be a function/);
});
