import assert from "node:assert/strict";
import { mandatoryPriorityLevels } from "../../src/config/bootstrap.ts";
import { errorsOf, limitedLevel, type Obj, queuingLevel } from "./_helpers.ts";

const PL = "PriorityLevelConfiguration";

function exemptLevel(name: string, spec: Obj = {}): Obj {
  return {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: PL,
    metadata: { name },
    spec: { type: "Exempt", ...spec },
  };
}

Deno.test("a valid Limited level has no errors", () => {
  assert.deepEqual(errorsOf(limitedLevel("pl")), []);
  assert.deepEqual(errorsOf(limitedLevel("pl", { limitResponse: { type: "Reject" } })), []);
});

Deno.test("PriorityLevelConfiguration names must be DNS-1123 subdomains", () => {
  const errors = errorsOf(limitedLevel("UPPER"));
  assert.equal(errors.length, 1);
  assert.match(
    errors[0]!,
    /^PriorityLevelConfiguration\/UPPER: metadata\.name: Invalid value: "UPPER": a lowercase RFC 1123 subdomain/,
  );
});

Deno.test("type must be Exempt if and only if the name is exempt", () => {
  assert.deepEqual(errorsOf(exemptLevel("other")), [
    `${PL}/other: spec.type: Invalid value: "Exempt": type must be 'Exempt' if and only if name is 'exempt'`,
  ]);
  const limitedExempt = limitedLevel("exempt");
  const errors = errorsOf(limitedExempt);
  assert.ok(
    errors.includes(
      `${PL}/exempt: spec.type: Invalid value: "Limited": type must be 'Exempt' if and only if name is 'exempt'`,
    ),
    errors.join("\n"),
  );
});

Deno.test("type must be Exempt or Limited", () => {
  const errors = errorsOf(exemptLevel("pl", { type: "Unlimited" }));
  assert.deepEqual(errors, [
    `${PL}/pl: spec.type: Unsupported value: "Unlimited": supported values: "Exempt", "Limited"`,
  ]);
});

Deno.test("Exempt and Limited parameters are exclusive", () => {
  const limitedParams = { limitResponse: { type: "Reject" } };
  assert.deepEqual(errorsOf(exemptLevel("exempt", { limited: limitedParams })), [
    `${PL}/exempt: spec.limited: Forbidden: must be nil if the type is not Limited`,
    // The mandatory exempt level also differs from its fixed spec.
    `${PL}/exempt: spec: Invalid value: {"type":"Exempt","limited":{"limitResponse":{"type":"Reject"},"nominalConcurrencyShares":30,"lendablePercent":0}}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value`,
  ]);
  const both = limitedLevel("pl");
  (both.spec as Obj).exempt = { nominalConcurrencyShares: 1 };
  assert.deepEqual(errorsOf(both), [
    `${PL}/pl: spec.exempt: Forbidden: must be nil if the type is Limited`,
  ]);
  const none = limitedLevel("pl");
  delete (none.spec as Obj).limited;
  assert.deepEqual(errorsOf(none), [
    `${PL}/pl: spec.limited: Required value: must not be empty when type is Limited`,
  ]);
});

Deno.test("Limited shares must be non-negative; zero is allowed in v1", () => {
  assert.deepEqual(errorsOf(limitedLevel("pl", { nominalConcurrencyShares: -1 })), [
    `${PL}/pl: spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer`,
  ]);
  assert.deepEqual(errorsOf(limitedLevel("pl", { nominalConcurrencyShares: 0 })), []);
});

Deno.test("older versions name the shares field assuredConcurrencyShares; a negative value fails in every version", () => {
  assert.deepEqual(
    errorsOf(
      limitedLevel(
        "pl",
        { nominalConcurrencyShares: undefined, assuredConcurrencyShares: -3 },
        "v1beta2",
      ),
    ),
    [
      `${PL}/pl: spec.limited.assuredConcurrencyShares: Invalid value: -3: must be a non-negative integer`,
    ],
  );
  assert.deepEqual(errorsOf(limitedLevel("pl", { nominalConcurrencyShares: -3 }, "v1beta3")), [
    `${PL}/pl: spec.limited.nominalConcurrencyShares: Invalid value: -3: must be a non-negative integer`,
  ]);
});

Deno.test("lendablePercent lies in [0, 100]; borrowingLimitPercent is non-negative", () => {
  for (const v of [-1, 101]) {
    assert.deepEqual(errorsOf(limitedLevel("pl", { lendablePercent: v })), [
      `${PL}/pl: spec.limited.lendablePercent: Invalid value: ${v}: must be between 0 and 100, inclusive`,
    ]);
  }
  assert.deepEqual(
    errorsOf(
      limitedLevel("pl", { lendablePercent: 0 }),
      limitedLevel("p2", { lendablePercent: 100 }),
    ),
    [],
  );
  assert.deepEqual(errorsOf(limitedLevel("pl", { borrowingLimitPercent: -1 })), [
    `${PL}/pl: spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer`,
  ]);
  assert.deepEqual(
    errorsOf(
      limitedLevel("pl", { borrowingLimitPercent: 0 }),
      limitedLevel("p2", { borrowingLimitPercent: 300 }),
    ),
    [],
  );
});

Deno.test("Exempt parameters: shares non-negative, lendablePercent in [0, 100]", () => {
  assert.deepEqual(errorsOf(exemptLevel("exempt", { exempt: { nominalConcurrencyShares: -1 } })), [
    `${PL}/exempt: spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer`,
  ]);
  assert.deepEqual(errorsOf(exemptLevel("exempt", { exempt: { lendablePercent: 150 } })), [
    `${PL}/exempt: spec.exempt.lendablePercent: Invalid value: 150: must be between 0 and 100, inclusive`,
  ]);
  // The admin may tune the exempt level.
  assert.deepEqual(
    errorsOf(
      exemptLevel("exempt", { exempt: { nominalConcurrencyShares: 10, lendablePercent: 50 } }),
    ),
    [],
  );
  assert.deepEqual(errorsOf(exemptLevel("exempt")), []);
});

Deno.test("limitResponse: Reject forbids queuing, Queue requires it", () => {
  assert.deepEqual(
    errorsOf(limitedLevel("pl", { limitResponse: { type: "Reject", queuing: { queues: 1 } } })),
    [
      `${PL}/pl: spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited`,
    ],
  );
  assert.deepEqual(errorsOf(limitedLevel("pl", { limitResponse: { type: "Queue" } })), [
    `${PL}/pl: spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited`,
  ]);
  assert.deepEqual(errorsOf(limitedLevel("pl", { limitResponse: { type: "Drop" } })), [
    `${PL}/pl: spec.limited.limitResponse.type: Unsupported value: "Drop": supported values: "Queue", "Reject"`,
  ]);
  // Omitted queuing fields take their defaults (64 / 8 / 50) before validation.
  assert.deepEqual(
    errorsOf(limitedLevel("pl", { limitResponse: { type: "Queue", queuing: {} } })),
    [],
  );
});

Deno.test("queuing: lengths and counts must be positive, queues at most 10,000,000", () => {
  const at = `${PL}/pl: spec.limited.limitResponse.queuing`;
  assert.deepEqual(errorsOf(queuingLevel({ queueLengthLimit: -5 })), [
    `${at}.queueLengthLimit: Invalid value: -5: must be positive`,
  ]);
  assert.deepEqual(errorsOf(queuingLevel({ queues: -1, handSize: 1 })), [
    `${at}.queues: Invalid value: -1: must be positive`,
    `${at}.handSize: Invalid value: 1: should not be greater than queues (-1)`,
  ]);
  assert.deepEqual(errorsOf(queuingLevel({ queues: 10_000_001, handSize: 1 })), [
    `${at}.queues: Invalid value: 10000001: must not be greater than 10000000`,
  ]);
  assert.deepEqual(errorsOf(queuingLevel({ queues: 10_000_000, handSize: 2 })), []);
  assert.deepEqual(errorsOf(queuingLevel({ handSize: -2 })), [
    `${at}.handSize: Invalid value: -2: must be positive`,
  ]);
  assert.deepEqual(errorsOf(queuingLevel({ queues: 4, handSize: 5 })), [
    `${at}.handSize: Invalid value: 5: should not be greater than queues (4)`,
  ]);
  assert.deepEqual(errorsOf(queuingLevel({ queues: 1, handSize: 1 })), []);
});

Deno.test("queuing: the hand needs at most 60 bits of entropy", () => {
  const at = `${PL}/pl: spec.limited.limitResponse.queuing.handSize`;
  assert.deepEqual(errorsOf(queuingLevel({ queues: 512, handSize: 8 })), [
    `${at}: Invalid value: 8: required entropy bits of deckSize 512 and handSize 8 should not be greater than 60`,
  ]);
  assert.equal(errorsOf(queuingLevel({ queues: 128, handSize: 10 })).length, 1); // 70 bits
  for (const [queues, handSize] of [[10_000_000, 2], [1024, 6], [64, 8], [128, 6]]) {
    assert.deepEqual(errorsOf(queuingLevel({ queues, handSize })), [], `${queues}/${handSize}`);
  }
});

Deno.test("mandatory levels: catch-all is fixed, exempt is fixed except spec.exempt", () => {
  const [exempt, catchAll] = mandatoryPriorityLevels() as unknown as Obj[];
  assert.deepEqual(errorsOf(exempt!, catchAll!), []);
  const bigger = limitedLevel("catch-all", {
    nominalConcurrencyShares: 50,
    limitResponse: { type: "Reject" },
  });
  const errors = errorsOf(bigger);
  assert.equal(errors.length, 1);
  assert.match(
    errors[0]!,
    /^PriorityLevelConfiguration\/catch-all: spec: Invalid value: .*: spec of 'catch-all' must equal the fixed value$/,
  );
  // An explicit borrowing limit differs from an unset one.
  const borrowing = limitedLevel("catch-all", {
    nominalConcurrencyShares: 5,
    borrowingLimitPercent: 0,
    limitResponse: { type: "Reject" },
  });
  assert.equal(errorsOf(borrowing).length, 1);
  // Omitting defaulted fields is the same spec.
  assert.deepEqual(
    errorsOf(
      limitedLevel("catch-all", { nominalConcurrencyShares: 5, limitResponse: { type: "Reject" } }),
    ),
    [],
  );
});

Deno.test("the v1beta3 round-trip annotation is forbidden on v1 objects", () => {
  const annotated = limitedLevel("pl", {}, "v1", {
    annotations: { "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares": "" },
  });
  assert.deepEqual(errorsOf(annotated), [
    `${PL}/pl: metadata.annotations: Forbidden: annotation 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares' is forbidden`,
  ]);
  const beta = limitedLevel("pl", {}, "v1beta3", {
    annotations: { "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares": "" },
  });
  assert.deepEqual(errorsOf(beta), []);
});
