import { MemoryBudgetStore } from "../../src/budgets/memory_store.ts";
import { budgetStoreConformance } from "../_helpers/budget_store_conformance.ts";

budgetStoreConformance("memory", () => ({ store: new MemoryBudgetStore(), close() {} }));
