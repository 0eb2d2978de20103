import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AdminRouter } from "@jfast/runtime/admin";

/** What the admin procedures return, as the browser receives them (after JSON). */
export type AdminOutputs = inferRouterOutputs<AdminRouter>;
export type AdminInputs = inferRouterInputs<AdminRouter>;
export type DeadLetterPage = AdminOutputs["deadLetters"]["list"];
export type DeadLetterItem = DeadLetterPage["items"][number];
export type ErrorGroupItem = AdminOutputs["deadLetters"]["groups"]["groups"][number];
export type OverviewData = AdminOutputs["overview"]["get"];
