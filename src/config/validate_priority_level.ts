/**
 * PriorityLevelConfiguration validation: every rule of
 * `pkg/apis/flowcontrol/validation/validation.go` (kubernetes/kubernetes) for
 * priority levels, with the kube-apiserver's field paths and messages. Runs on
 * defaulted v1 objects; `version` only names the shares field the way the
 * request wrote it.
 *
 * @module
 */

import { mandatoryPriorityLevels } from "./bootstrap.ts";
import {
  CATCH_ALL,
  EXEMPT,
  MAX_HASH_BITS,
  MAX_QUEUES,
  PRESERVE_ZERO_SHARES_ANNOTATION,
  requiredEntropyBits,
} from "./constants.ts";
import {
  type FieldError,
  FieldErrorList,
  forbidden,
  invalid,
  notSupported,
  required,
} from "./field_errors.ts";
import { validateObjectMeta } from "./object_meta.ts";
import { semanticallyEqual } from "./_semantic_equal.ts";
import type {
  ExemptPriorityLevelConfiguration,
  LimitedPriorityLevelConfiguration,
  PriorityLevelConfiguration,
  QueuingConfiguration,
} from "./types.ts";
import { type FlowControlVersion, sharesFieldName } from "./versions.ts";

const PERCENT_RANGE = "must be between 0 and 100, inclusive";

/** Every problem with a defaulted PriorityLevelConfiguration; empty when it is valid. */
export function validatePriorityLevel(
  pl: PriorityLevelConfiguration,
  version: FlowControlVersion = "v1",
): FieldError[] {
  const name = pl.metadata.name;
  const errs = new FieldErrorList("PriorityLevelConfiguration", name);
  validateObjectMeta(errs, pl.metadata);
  if (pl.metadata.annotations?.[PRESERVE_ZERO_SHARES_ANNOTATION] !== undefined) {
    errs.add(
      "metadata.annotations",
      forbidden(`annotation '${PRESERVE_ZERO_SHARES_ANNOTATION}' is forbidden`),
    );
  }
  const spec = pl.spec;
  if ((name === EXEMPT) !== (spec.type === "Exempt")) {
    errs.add(
      "spec.type",
      invalid(spec.type, "type must be 'Exempt' if and only if name is 'exempt'"),
    );
  }
  if (spec.type === "Exempt") {
    if (spec.limited !== undefined) {
      errs.add("spec.limited", forbidden("must be nil if the type is not Limited"));
    }
    if (spec.exempt !== undefined) validateExempt(errs, spec.exempt);
  } else if (spec.type === "Limited") {
    if (spec.exempt !== undefined) {
      errs.add("spec.exempt", forbidden("must be nil if the type is Limited"));
    }
    if (spec.limited === undefined) {
      errs.add("spec.limited", required("must not be empty when type is Limited"));
    } else {
      validateLimited(errs, spec.limited, version);
    }
  } else {
    errs.add("spec.type", notSupported(spec.type, ["Exempt", "Limited"]));
  }
  validateIfMandatory(errs, pl);
  return errs.errors;
}

function validateLimited(
  errs: FieldErrorList,
  limited: LimitedPriorityLevelConfiguration,
  version: FlowControlVersion,
): void {
  const shares = limited.nominalConcurrencyShares ?? 0;
  const sharesPath = `spec.limited.${sharesFieldName(version)}`;
  // Zero shares (a level that only borrows) are allowed whatever the version since the
  // ZeroLimitedNominalConcurrencyShares gate went GA (1.30; removed in 1.32); v1beta1 and v1beta2
  // default 0 to 30, so only a negative value fails, named as the version names the field.
  if (shares < 0) errs.add(sharesPath, invalid(shares, "must be a non-negative integer"));
  const response = limited.limitResponse;
  const rp = "spec.limited.limitResponse";
  if (response.type === "Reject") {
    if (response.queuing !== undefined) {
      errs.add(
        `${rp}.queuing`,
        forbidden("must be nil if limited.limitResponse.type is not Limited"),
      );
    }
  } else if (response.type === "Queue") {
    if (response.queuing === undefined) {
      errs.add(
        `${rp}.queuing`,
        required("must not be empty if limited.limitResponse.type is Limited"),
      );
    } else {
      validateQueuing(errs, response.queuing, `${rp}.queuing`);
    }
  } else {
    errs.add(`${rp}.type`, notSupported(response.type, ["Queue", "Reject"]));
  }
  validatePercent(errs, limited.lendablePercent, "spec.limited.lendablePercent");
  const borrowing = limited.borrowingLimitPercent;
  if (borrowing !== undefined && borrowing < 0) {
    errs.add(
      "spec.limited.borrowingLimitPercent",
      invalid(borrowing, "if specified, must be a non-negative integer"),
    );
  }
}

function validateQueuing(errs: FieldErrorList, q: QueuingConfiguration, path: string): void {
  const queues = q.queues ?? 0;
  const handSize = q.handSize ?? 0;
  const queueLengthLimit = q.queueLengthLimit ?? 0;
  if (queueLengthLimit <= 0) {
    errs.add(`${path}.queueLengthLimit`, invalid(queueLengthLimit, "must be positive"));
  }
  if (queues <= 0) errs.add(`${path}.queues`, invalid(queues, "must be positive"));
  else if (queues > MAX_QUEUES) {
    errs.add(`${path}.queues`, invalid(queues, `must not be greater than ${MAX_QUEUES}`));
  }
  const hp = `${path}.handSize`;
  if (handSize <= 0) errs.add(hp, invalid(handSize, "must be positive"));
  else if (handSize > queues) {
    errs.add(hp, invalid(handSize, `should not be greater than queues (${queues})`));
  } else if (requiredEntropyBits(queues, handSize) > MAX_HASH_BITS) {
    // Shuffle sharding deals the hand from 60 bits of the flow hash.
    errs.add(
      hp,
      invalid(
        handSize,
        `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${MAX_HASH_BITS}`,
      ),
    );
  }
}

function validateExempt(errs: FieldErrorList, exempt: ExemptPriorityLevelConfiguration): void {
  const shares = exempt.nominalConcurrencyShares;
  if (shares !== undefined && shares < 0) {
    errs.add(
      "spec.exempt.nominalConcurrencyShares",
      invalid(shares, "must be a non-negative integer"),
    );
  }
  validatePercent(errs, exempt.lendablePercent, "spec.exempt.lendablePercent");
}

function validatePercent(errs: FieldErrorList, value: number | undefined, path: string): void {
  if (value !== undefined && (value < 0 || value > 100)) {
    errs.add(path, invalid(value, PERCENT_RANGE));
  }
}

function validateIfMandatory(errs: FieldErrorList, pl: PriorityLevelConfiguration): void {
  const name = pl.metadata.name;
  const fixed = mandatoryPriorityLevels().find((m) => m.metadata.name === name);
  if (fixed === undefined) return;
  if (name === CATCH_ALL && !semanticallyEqual(pl.spec, fixed.spec)) {
    errs.add("spec", invalid(pl.spec, `spec of '${name}' must equal the fixed value`));
  }
  // Admins may tune the exempt level's shares and lendable percent.
  if (name === EXEMPT) {
    const { exempt: _a, ...given } = pl.spec;
    const { exempt: _b, ...want } = fixed.spec;
    if (!semanticallyEqual(given, want)) {
      errs.add(
        "spec",
        invalid(
          pl.spec,
          "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value",
        ),
      );
    }
  }
}
