/**
 * Reading manifests: multi-document YAML or JSON holding FlowSchemas,
 * PriorityLevelConfigurations, `kind: List`, `FlowSchemaList` or
 * `PriorityLevelConfigurationList`. Each object is decoded (wire shape
 * checked, older versions converted, v1 defaults applied) but not yet
 * validated; see `load.ts` for that.
 *
 * @module
 */

import { type Document, LineCounter, parseAllDocuments } from "yaml";
import { defaultFlowSchema, defaultPriorityLevel } from "./defaults.ts";
import { FieldErrorList, formatFieldError } from "./field_errors.ts";
import {
  flowSchemaDocumentSchema,
  legacyPriorityLevelDocumentSchema,
  priorityLevelDocumentSchema,
} from "./_schema.ts";
import { FLOWCONTROL_V1, type FlowControlObject } from "./types.ts";
import { type FlowControlVersion, flowControlVersion, priorityLevelToV1 } from "./versions.ts";
import { addZodIssue, fieldPath } from "./_zod_issues.ts";
import type { z } from "zod";

/** Where an object came from. */
export interface ManifestLocation {
  /** The file name or label of the manifest. */
  source: string;
  /** 1-based index of the YAML document within the source. */
  document: number;
  /** 0-based index within a list's `items`, for objects inside a list. */
  item?: number;
  /** 1-based line where the object starts, when known. */
  line?: number;
}

/** A decoded and defaulted object, with the version it was written in. */
export interface DecodedObject {
  /** The object, converted to v1 and defaulted. */
  object: FlowControlObject;
  /** The API version the manifest used (it names fields in error messages). */
  version: FlowControlVersion;
  /** Where the object was written. */
  location: ManifestLocation;
  /**
   * Field paths whose values did not decode and stand repaired (an allowed
   * value for an unsupported one, an optional field dropped), so that the
   * rest of an invalid object is validated too, as Kubernetes reports every
   * field error of an object. The decode errors already name these fields;
   * validation errors at them are left out. Absent for an object that
   * decoded as written.
   */
  repaired?: string[];
}

/** What reading one manifest produced. */
export interface DecodedManifest {
  /** Objects that decoded. */
  objects: DecodedObject[];
  /**
   * Objects that did not decode, repaired so that the rest of each can be
   * validated (each with its `repaired` paths); never part of a configuration.
   */
  partial?: DecodedObject[];
  /** One message per problem: syntax, unknown kinds, wrong field types. */
  errors: string[];
}

const LIST_KINDS: Record<string, string | undefined> = {
  List: undefined,
  FlowSchemaList: "FlowSchema",
  PriorityLevelConfigurationList: "PriorityLevelConfiguration",
};

/** Renders a location as `source: document N, item I, line L`. */
export function formatLocation(at: ManifestLocation): string {
  let out = `${at.source}: document ${at.document}`;
  if (at.item !== undefined) out += `, item ${at.item}`;
  if (at.line !== undefined) out += `, line ${at.line}`;
  return out;
}

/**
 * Decodes every object of a YAML or JSON manifest. Problems are collected,
 * never thrown; an object with a problem is left out of `objects`.
 *
 * @example
 * ```ts
 * import { decodeManifest } from "./manifest.ts";
 * const { objects, errors } = decodeManifest("kind: FlowSchema\n", "fs.yaml");
 * ```
 */
export function decodeManifest(text: string, source = "<input>"): DecodedManifest {
  const result: DecodedManifest = { objects: [], errors: [] };
  const lines = new LineCounter();
  const docs = withEnvHint(() =>
    parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, version: "1.1" })
  );
  if (!Array.isArray(docs)) return result; // an empty stream
  docs.forEach((doc, i) => {
    const at: ManifestLocation = { source, document: i + 1 };
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        const line = lines.linePos(e.pos[0]).line;
        const where = formatLocation(line === undefined ? at : { ...at, line });
        result.errors.push(`${where}: invalid YAML: ${firstLine(e.message)}`);
      }
      return;
    }
    let value: unknown;
    try {
      value = withEnvHint(() => doc.toJS({ maxAliasCount: 1000 }));
    } catch (e) {
      if (e instanceof YamlEnvironmentError) throw e;
      result.errors.push(`${formatLocation(at)}: invalid YAML: ${(e as Error).message}`);
      return;
    }
    if (value === null || value === undefined) return; // an empty document
    const line = lineOf(doc, lines, []);
    const where = line === undefined ? at : { ...at, line };
    decodeValue(stripNulls(value), where, { doc, lines }, result);
  });
  return result;
}

/**
 * Decodes objects that are already parsed (for example built in code), as if
 * each were one document of a manifest named `source`.
 */
export function decodeValues(values: readonly unknown[], source = "<objects>"): DecodedManifest {
  const result: DecodedManifest = { objects: [], errors: [] };
  values.forEach((v, i) =>
    decodeValue(stripNulls(v), { source, document: i + 1 }, undefined, result)
  );
  return result;
}

interface YamlPosition {
  doc: Document;
  lines: LineCounter;
}

function decodeValue(
  value: unknown,
  at: ManifestLocation,
  yaml: YamlPosition | undefined,
  out: DecodedManifest,
): void {
  if (!isRecord(value)) {
    out.errors.push(`${formatLocation(at)}: expected an object with apiVersion and kind`);
    return;
  }
  const kind = value.kind;
  if (typeof kind === "string" && kind in LIST_KINDS) {
    if (!Array.isArray(value.items)) {
      if (value.items !== undefined) {
        out.errors.push(`${formatLocation(at)}: ${kind}.items must be a list`);
      }
      return;
    }
    // Items of typed lists returned by the API server omit apiVersion and kind.
    const itemKind = LIST_KINDS[kind];
    value.items.forEach((item: unknown, i: number) => {
      const line = yaml && lineOf(yaml.doc, yaml.lines, ["items", i]);
      const itemAt: ManifestLocation = { ...at, item: i };
      if (line === undefined) delete itemAt.line;
      else itemAt.line = line;
      const filled = itemKind !== undefined && isRecord(item)
        ? { apiVersion: value.apiVersion, kind: itemKind, ...item }
        : item;
      if (isRecord(filled) && typeof filled.kind === "string" && filled.kind in LIST_KINDS) {
        out.errors.push(`${formatLocation(itemAt)}: lists cannot be nested`);
        return;
      }
      if (isRecord(filled) && itemKind !== undefined && filled.kind !== itemKind) {
        out.errors.push(
          `${formatLocation(itemAt)}: a ${kind} can only hold ${itemKind} objects, got ${
            JSON.stringify(filled.kind)
          }`,
        );
        return;
      }
      decodeValue(filled, itemAt, yaml, out);
    });
    return;
  }
  decodeObject(value, at, out);
}

function decodeObject(
  value: Record<string, unknown>,
  at: ManifestLocation,
  out: DecodedManifest,
): void {
  const { kind, apiVersion } = value;
  if (kind !== "FlowSchema" && kind !== "PriorityLevelConfiguration") {
    out.errors.push(
      `${formatLocation(at)}: unsupported kind ${JSON.stringify(kind ?? "")} ` +
        `(apiVersion ${JSON.stringify(apiVersion ?? "")}): expected FlowSchema, ` +
        "PriorityLevelConfiguration, or a List of them",
    );
    return;
  }
  const version = flowControlVersion(apiVersion);
  if (version === undefined) {
    out.errors.push(
      `${formatLocation(at)}: ${kind}: unsupported apiVersion ${
        JSON.stringify(apiVersion ?? "")
      }: ` +
        "expected flowcontrol.apiserver.k8s.io/v1, v1beta3, v1beta2 or v1beta1",
    );
    return;
  }
  const meta = isRecord(value.metadata) ? value.metadata : {};
  const name = typeof meta.name === "string" ? meta.name : "";
  const errs = new FieldErrorList(kind, name);
  if (kind === "FlowSchema") {
    const decoded = decodeWith(flowSchemaDocumentSchema, value, errs, out);
    if (decoded === null) return;
    const object = defaultFlowSchema({ ...decoded.data, apiVersion: FLOWCONTROL_V1, kind });
    keep(out, { object, version, location: at, ...decoded.repaired });
  } else {
    const schema = version === "v1beta1" || version === "v1beta2"
      ? legacyPriorityLevelDocumentSchema
      : priorityLevelDocumentSchema;
    const decoded = decodeWith(schema, value, errs, out);
    if (decoded === null) return;
    const object = defaultPriorityLevel(priorityLevelToV1(decoded.data, version));
    keep(out, { object, version, location: at, ...decoded.repaired });
  }
}

/** An object decoded as written joins the objects; a repaired one, the partial ones. */
function keep(out: DecodedManifest, decoded: DecodedObject): void {
  if (decoded.repaired === undefined) out.objects.push(decoded);
  else (out.partial ??= []).push(decoded);
}

/** Repairs of an object that does not decode, before giving up on validating the rest of it. */
const MAX_REPAIR_ROUNDS = 4;

/**
 * `value` decoded by `schema`. When it does not decode, its problems are
 * reported, and the value is repaired where a field's problem allows
 * (an unsupported value: an allowed one; any other: the field dropped) so
 * that the rest of the object can still be validated; `null` when it cannot
 * be (a required field missing).
 */
function decodeWith<T>(
  schema: z.ZodType<T>,
  value: unknown,
  errs: FieldErrorList,
  out: DecodedManifest,
): { data: T; repaired: { repaired?: string[] } } | null {
  let parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return { data: parsed.data, repaired: {} };
  reportIssues(errs, parsed.error.issues, out);
  const repaired: string[] = [];
  let current = structuredClone(value);
  for (let round = 0; round < MAX_REPAIR_ROUNDS && !parsed.success; round++) {
    for (const issue of parsed.error.issues) {
      if (issue.code === "invalid_type" && issue.input === undefined) return null; // required
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) {
          repaired.push(fieldPath([...issue.path, key]));
          setAt(current, [...issue.path, key], undefined);
        }
        continue;
      }
      if (issue.code === "invalid_value" && issue.values.length > 0) {
        // A discriminator (a type, a kind) stands for its object: the fields beside it were
        // written for the value that did not decode, so none of them is validated.
        repaired.push(fieldPath(issue.path.slice(0, -1)));
        setAt(current, issue.path, issue.values[0]);
      } else {
        repaired.push(fieldPath(issue.path));
        setAt(current, issue.path, undefined);
      }
    }
    current = structuredClone(current);
    parsed = schema.safeParse(current, { reportInput: true });
  }
  return parsed.success ? { data: parsed.data, repaired: { repaired } } : null;
}

/** Sets (or, with `undefined`, deletes) the value at `path` inside `root`, where it exists. */
function setAt(root: unknown, path: readonly PropertyKey[], value: unknown): void {
  let node = root;
  for (const key of path.slice(0, -1)) {
    if (typeof node !== "object" || node === null) return;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  const last = path.at(-1);
  if (typeof node !== "object" || node === null || last === undefined) return;
  if (value === undefined) delete (node as Record<PropertyKey, unknown>)[last];
  else (node as Record<PropertyKey, unknown>)[last] = value;
}

function reportIssues(
  errs: FieldErrorList,
  issues: readonly Parameters<typeof addZodIssue>[1][],
  out: DecodedManifest,
): void {
  for (const issue of issues) addZodIssue(errs, issue);
  // A loop, not push(...list): a manifest can have more problems than the stack has room for.
  for (const e of errs.errors) out.errors.push(formatFieldError(e));
}

/** Thrown when the host forbids the environment reads the `yaml` package makes. */
export class YamlEnvironmentError extends Error {
  /** Wraps the host's permission error. */
  constructor(cause: unknown) {
    super(
      "Cannot parse YAML: npm:yaml reads the LOG_TOKENS and LOG_STREAM environment variables; " +
        "on Deno, run with --allow-env=LOG_TOKENS,LOG_STREAM",
      { cause },
    );
    this.name = "YamlEnvironmentError";
  }
}

/**
 * npm:yaml's Node build reads `process.env.LOG_TOKENS`/`LOG_STREAM` while
 * parsing; Deno refuses that without env permission. Say so plainly.
 */
function withEnvHint<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof Error && /LOG_TOKENS|LOG_STREAM/.test(e.message)) {
      throw new YamlEnvironmentError(e);
    }
    throw e;
  }
}

/** JSON `null` (and `undefined` in code) means "absent" for every optional field, as in Go's decoder. */
function stripNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripNulls);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v !== null && v !== undefined) out[k] = stripNulls(v);
  }
  return out;
}

function lineOf(doc: Document, lines: LineCounter, path: (string | number)[]): number | undefined {
  const node = path.length === 0 ? doc.contents : doc.getIn(path, true);
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return range === undefined ? undefined : lines.linePos(range[0]).line;
}

function firstLine(message: string): string {
  return (message.split("\n")[0] ?? message).replace(/ at line \d+, column \d+:?$/, "");
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
