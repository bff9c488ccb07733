/**
 * The snippet of `docs/configuration.md`, "In code": manifests
 * merged with the built-in objects, then the seats of each level. What it
 * takes as given comes from `_context.ts`.
 *
 *   deno run --allow-env=LOG_TOKENS,LOG_STREAM examples/library/load_configuration.ts
 *   npx -y deno@2 run --allow-env=LOG_TOKENS,LOG_STREAM examples/library/load_configuration.ts
 *
 * @module
 */

import { yamlText } from "./_context.ts";
import { loadConfiguration, resolveConfiguration } from "@apf/edge";

const user = loadConfiguration({ manifests: [{ name: "apf.yaml", text: yamlText }] }); // throws ConfigurationError
// Merged with the built-in objects as a kube-apiserver does, then the seats of each level:
const effective = resolveConfiguration(user, { serverConcurrencyLimit: 600, onNote: console.log });

console.log(effective.priorityLevels.map((level) => level.name));
