/**
 * zod schemas for the wire shape of the flowcontrol objects. They check JSON
 * types, enums and unknown fields; the semantic rules of Kubernetes'
 * `validation.go` (`docs/semantics.md` §1.4) live in the `validate_*`
 * modules so that every rule can report in Kubernetes' words.
 *
 * Go fields that are not pointers (strings, lists, `spec`, `limitResponse`) default to
 * their zero value here, as Go's decoder would leave them, so that a missing
 * field gets the same message as an empty one.
 *
 * @module
 */

import { z } from "zod";
import type {
  ExemptPriorityLevelConfiguration,
  FlowSchemaSpec,
  LimitedPriorityLevelConfiguration,
  NonResourcePolicyRule,
  ObjectMeta,
  PolicyRulesWithSubjects,
  PriorityLevelConfigurationSpec,
  QueuingConfiguration,
  ResourcePolicyRule,
  Subject,
} from "./types.ts";

const name = z.string().default("");

/** A Go struct field (not a pointer): missing, it is the zero value, `{}`, validated as such. */
function zeroWhenMissing<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => value === undefined ? {} : value, schema);
}
const strings = z.array(z.string()).default([]);
const int32 = z.int32();

const subjectSchema: z.ZodType<Subject> = z.strictObject({
  kind: z.enum(["Group", "ServiceAccount", "User"]),
  user: z.strictObject({ name }).exactOptional(),
  group: z.strictObject({ name }).exactOptional(),
  serviceAccount: z.strictObject({ namespace: name, name }).exactOptional(),
});

const resourceRuleSchema: z.ZodType<ResourcePolicyRule> = z.strictObject({
  verbs: strings,
  apiGroups: strings,
  resources: strings,
  clusterScope: z.boolean().exactOptional(),
  namespaces: z.array(z.string()).exactOptional(),
});

const nonResourceRuleSchema: z.ZodType<NonResourcePolicyRule> = z.strictObject({
  verbs: strings,
  nonResourceURLs: strings,
});

const policyRulesSchema: z.ZodType<PolicyRulesWithSubjects> = z.strictObject({
  subjects: z.array(subjectSchema).default([]),
  resourceRules: z.array(resourceRuleSchema).exactOptional(),
  nonResourceRules: z.array(nonResourceRuleSchema).exactOptional(),
});

/** Schema of `FlowSchema.spec` (v1 and v1beta1..3 share it). */
export const flowSchemaSpecSchema: z.ZodType<FlowSchemaSpec> = z.strictObject({
  priorityLevelConfiguration: z.strictObject({ name }).default({ name: "" }),
  matchingPrecedence: int32.exactOptional(),
  distinguisherMethod: z.strictObject({ type: z.enum(["ByNamespace", "ByUser"]) })
    .exactOptional(),
  rules: z.array(policyRulesSchema).exactOptional(),
});

const queuingSchema: z.ZodType<QueuingConfiguration> = z.strictObject({
  queues: int32.exactOptional(),
  handSize: int32.exactOptional(),
  queueLengthLimit: int32.exactOptional(),
});

const limitResponseSchema = z.strictObject({
  type: z.enum(["Queue", "Reject"]),
  queuing: queuingSchema.exactOptional(),
});

const limitedSchema: z.ZodType<LimitedPriorityLevelConfiguration> = z.strictObject({
  nominalConcurrencyShares: int32.exactOptional(),
  limitResponse: zeroWhenMissing(limitResponseSchema),
  lendablePercent: int32.exactOptional(),
  borrowingLimitPercent: int32.exactOptional(),
});

/** v1beta1 and v1beta2 call the shares `assuredConcurrencyShares`. */
const legacyLimitedSchema: z.ZodType<LimitedPriorityLevelConfiguration> = z.strictObject({
  assuredConcurrencyShares: int32.exactOptional(),
  limitResponse: zeroWhenMissing(limitResponseSchema),
  lendablePercent: int32.exactOptional(),
  borrowingLimitPercent: int32.exactOptional(),
}).transform(({ assuredConcurrencyShares: shares, ...rest }) =>
  shares === undefined ? rest : { ...rest, nominalConcurrencyShares: shares }
);

const exemptSchema: z.ZodType<ExemptPriorityLevelConfiguration> = z.strictObject({
  nominalConcurrencyShares: int32.exactOptional(),
  lendablePercent: int32.exactOptional(),
});

function priorityLevelSpec(
  limited: z.ZodType<LimitedPriorityLevelConfiguration>,
): z.ZodType<PriorityLevelConfigurationSpec> {
  return z.strictObject({
    type: z.enum(["Exempt", "Limited"]),
    limited: limited.exactOptional(),
    exempt: exemptSchema.exactOptional(),
  });
}

/** Schema of `PriorityLevelConfiguration.spec` in v1 and v1beta3. */
export const priorityLevelSpecSchema: z.ZodType<PriorityLevelConfigurationSpec> = priorityLevelSpec(
  limitedSchema,
);

/** Schema of `PriorityLevelConfiguration.spec` in v1beta1 and v1beta2. */
export const legacyPriorityLevelSpecSchema: z.ZodType<PriorityLevelConfigurationSpec> =
  priorityLevelSpec(legacyLimitedSchema);

/**
 * Fields of Kubernetes' `ObjectMeta` that a server sets (or a client may send) and flow control
 * does not read: accepted, whatever they hold, and dropped (a `kubectl get -o yaml` dump loads).
 */
const IGNORED_META_FIELDS = [
  "generateName",
  "namespace",
  "selfLink",
  "resourceVersion",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "ownerReferences",
  "finalizers",
  "managedFields",
] as const;

/**
 * Schema of the metadata flow control reads. The other fields of `ObjectMeta`
 * are accepted and dropped; a field `ObjectMeta` does not have is an unknown
 * field, as anywhere else in the object (Kubernetes' strict decoding).
 */
export const objectMetaSchema: z.ZodType<ObjectMeta> = z.strictObject({
  name,
  uid: z.string().exactOptional(),
  generation: z.int().exactOptional(),
  annotations: z.record(z.string(), z.string()).exactOptional(),
  labels: z.record(z.string(), z.string()).exactOptional(),
  ...Object.fromEntries(IGNORED_META_FIELDS.map((f) => [f, z.unknown().exactOptional()])),
}).transform((meta): ObjectMeta => {
  const out: ObjectMeta = { name: meta.name };
  if (meta.uid !== undefined) out.uid = meta.uid;
  if (meta.generation !== undefined) out.generation = meta.generation;
  if (meta.annotations !== undefined) out.annotations = meta.annotations;
  if (meta.labels !== undefined) out.labels = meta.labels;
  return out;
});

/** A FlowSchema as written in a manifest, before defaulting. */
export interface FlowSchemaDocument {
  /** One of the accepted flowcontrol API versions. */
  apiVersion: string;
  /** `FlowSchema`. */
  kind: "FlowSchema";
  /** Object metadata. */
  metadata: ObjectMeta;
  /** The spec as written. */
  spec: FlowSchemaSpec;
}

/** A PriorityLevelConfiguration as written in a manifest, before defaulting. */
export interface PriorityLevelDocument {
  /** One of the accepted flowcontrol API versions. */
  apiVersion: string;
  /** `PriorityLevelConfiguration`. */
  kind: "PriorityLevelConfiguration";
  /** Object metadata. */
  metadata: ObjectMeta;
  /** The spec as written. */
  spec: PriorityLevelConfigurationSpec;
}

/** Schema of a whole FlowSchema object; `status` is accepted and dropped. */
export const flowSchemaDocumentSchema: z.ZodType<FlowSchemaDocument> = z.strictObject({
  apiVersion: z.string(),
  kind: z.literal("FlowSchema"),
  metadata: objectMetaSchema,
  spec: zeroWhenMissing(flowSchemaSpecSchema),
  status: z.unknown().transform(() => undefined).exactOptional(),
}).transform(({ status: _status, ...rest }) => rest);

function priorityLevelDocument(
  spec: z.ZodType<PriorityLevelConfigurationSpec>,
): z.ZodType<PriorityLevelDocument> {
  return z.strictObject({
    apiVersion: z.string(),
    kind: z.literal("PriorityLevelConfiguration"),
    metadata: objectMetaSchema,
    spec: zeroWhenMissing(spec),
    status: z.unknown().transform(() => undefined).exactOptional(),
  }).transform(({ status: _status, ...rest }) => rest);
}

/** Schema of a whole v1/v1beta3 PriorityLevelConfiguration; `status` is accepted and dropped. */
export const priorityLevelDocumentSchema: z.ZodType<PriorityLevelDocument> = priorityLevelDocument(
  priorityLevelSpecSchema,
);

/** Schema of a whole v1beta1/v1beta2 PriorityLevelConfiguration. */
export const legacyPriorityLevelDocumentSchema: z.ZodType<PriorityLevelDocument> =
  priorityLevelDocument(legacyPriorityLevelSpecSchema);
