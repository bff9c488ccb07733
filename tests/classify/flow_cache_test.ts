import assert from "node:assert/strict";
import { FlowCache, MAX_CACHED_LENGTH, MAX_CHAIN } from "../../src/classify/_flow_cache.ts";
import { Classifier, FLOW_CACHE_LIMIT } from "../../src/classify/classifier.ts";
import { flowHash } from "../../src/classify/flow_hash.ts";
import { describeRequest } from "../../src/classify/request_info.ts";
import {
  effectiveConfiguration,
  type FlowSchema,
  type PriorityLevelConfiguration,
} from "../../src/config/mod.ts";

Deno.test("the flow cache holds at most its limit, however many schemas share it", () => {
  const cache = new FlowCache(64);
  let seed = 1;
  const random = () => (seed = Math.imul(seed, 48271) % 0x7fffffff) / 0x7fffffff;
  for (let i = 0; i < 20_000; i++) {
    const position = Math.floor(random() * 1000);
    const user = `user-${Math.floor(random() * 5000)}`;
    const hash = cache.get(position, `fs-${position}`, user);
    assert.ok(Object.isFrozen(hash));
    assert.deepEqual(hash, flowHash(`fs-${position}`, user));
    assert.ok(cache.size <= 64, `size ${cache.size} after ${i + 1} flows`);
  }
  assert.throws(() => new FlowCache(1), RangeError);
});

Deno.test("a hot flow stays cached while cold flows stream past", () => {
  const cache = new FlowCache(16); // generations of 8
  const hot = cache.get(0, "a", "hot");
  for (let i = 0; i < 10_000; i++) {
    // The hot flow comes back within every 7 new flows: never older than a generation.
    if (i % 7 === 0) assert.equal(cache.get(0, "a", "hot"), hot, `request ${i}`);
    cache.get(1 + (i % 2), i % 2 === 0 ? "b" : "c", `cold-${i}`);
  }
});

Deno.test("eviction: a previous-generation hit is kept; a flow two generations old is hashed again", () => {
  const cache = new FlowCache(8); // generations of 4
  const first = ["a", "b", "c", "d"].map((d) => cache.get(0, "s", d));
  assert.equal(cache.size, 4);
  cache.get(1, "t", "e"); // the current generation was full: it becomes the previous one
  assert.equal(cache.size, 5);
  // "a" is found in the previous generation, copied forward, and is the same object.
  assert.equal(cache.get(0, "s", "a"), first[0]);
  assert.equal(cache.size, 6);
  // The same distinguisher under another schema is another flow.
  const other = cache.get(1, "t", "a");
  assert.notEqual(other, first[0]);
  assert.deepEqual(other, flowHash("t", "a"));
  // Two more new flows fill the generation ({e, a, t:a, f}); the next swap drops {a..d}
  // except what was copied forward.
  cache.get(1, "t", "f");
  cache.get(1, "t", "g");
  assert.equal(cache.get(0, "s", "a"), first[0], "copied forward, so still cached");
  const b = cache.get(0, "s", "b");
  assert.notEqual(b, first[1], "evicted: hashed again");
  assert.deepEqual(b, first[1]);
  assert.ok(Object.isFrozen(b));
  assert.ok(cache.size <= 8);
});

Deno.test("colliding keys: entries are told apart by schema and distinguisher", () => {
  // Two key bits: four keys for thousands of flows, so nearly every look-up walks a chain.
  const cache = new FlowCache(256, 2);
  for (let i = 0; i < 5_000; i++) {
    const position = i % 7, user = `u${(i * 31) % 300}`;
    const hash = cache.get(position, `fs-${position}`, user);
    assert.deepEqual(hash, flowHash(`fs-${position}`, user));
  }
  assert.ok(cache.size <= 2 * 4 * MAX_CHAIN, "chains stop growing at MAX_CHAIN");
});

Deno.test("a chain at MAX_CHAIN takes no more entries: those flows are hashed each time", () => {
  const cache = new FlowCache(1000, 0); // one key for every flow
  const first = Array.from({ length: MAX_CHAIN + 2 }, (_, i) => cache.get(0, "s", `u${i}`));
  assert.equal(cache.size, MAX_CHAIN);
  for (let i = 0; i < MAX_CHAIN; i++) assert.equal(cache.get(0, "s", `u${i}`), first[i]);
  const extra = cache.get(0, "s", `u${MAX_CHAIN}`);
  assert.notEqual(extra, first[MAX_CHAIN], "not cached: a new object");
  assert.deepEqual(extra, first[MAX_CHAIN]);
  assert.equal(cache.size, MAX_CHAIN);
});

Deno.test("distinguishers longer than MAX_CACHED_LENGTH are hashed, not kept", () => {
  const cache = new FlowCache(100);
  const long = "x".repeat(MAX_CACHED_LENGTH + 1);
  const a = cache.get(0, "s", long);
  assert.deepEqual(a, flowHash("s", long));
  assert.ok(Object.isFrozen(a));
  assert.equal(cache.size, 0);
  const edge = "y".repeat(MAX_CACHED_LENGTH);
  assert.equal(cache.get(0, "s", edge), cache.get(0, "s", edge));
  assert.equal(cache.size, 1);
});

function tenants(count: number) {
  const level: PriorityLevelConfiguration = {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "PriorityLevelConfiguration",
    metadata: { name: "tenants" },
    spec: {
      type: "Limited",
      limited: { limitResponse: { type: "Queue", queuing: { queues: 64, handSize: 4 } } },
    },
  };
  const flowSchemas = Array.from({ length: count }, (_, i): FlowSchema => ({
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name: `tenant-${i}` },
    spec: {
      priorityLevelConfiguration: { name: "tenants" },
      matchingPrecedence: 1000 + i,
      distinguisherMethod: { type: "ByUser" },
      rules: [{
        subjects: [{ kind: "Group", group: { name: `tenant-${i}` } }],
        nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      }],
    },
  }));
  return new Classifier(effectiveConfiguration({ flowSchemas, priorityLevels: [level] }));
}

Deno.test("one cache bound for all FlowSchemas of a classifier; hot flows survive it", () => {
  const classifier = tenants(200);
  const ri = describeRequest("GET", "/x");
  const user = (i: number) => ({ name: `user-${i}`, groups: [`tenant-${i % 200}`] });
  const first = classifier.classify(user(0), ri).flowHash;
  const hot = classifier.classify(user(1), ri).flowHash;
  // FLOW_CACHE_LIMIT new flows, spread over the 200 schemas: user-0's schema sees only
  // 1/200 of them, which a cache per schema would have kept, but the one bound is reached.
  for (let i = 2; i < FLOW_CACHE_LIMIT + 2; i++) {
    classifier.classify(user(i), ri);
    if (i % 1000 === 0) assert.equal(classifier.classify(user(1), ri).flowHash, hot);
  }
  const again = classifier.classify(user(0), ri).flowHash;
  assert.notEqual(again, first, "evicted after FLOW_CACHE_LIMIT newer flows");
  assert.deepEqual(again, first);
  assert.equal(classifier.classify(user(1), ri).flowHash, hot);
});
