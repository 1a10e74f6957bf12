// How much of an event's history the delivery log shows (ND-WEBHOOK-LOG). The contract
// states it once, as the `maxItems` of WebhookEvent's `attempts`; the server reads it
// here to cut the answer, so the two cannot drift apart.
import { loadBundle, type JsonObject } from './schemas.ts';

/** The attempts of one event the log shows at most, the latest. */
export function shownAttemptsLimit(bundle: JsonObject = loadBundle()): number {
  const schemas = (bundle.components as JsonObject | undefined)?.schemas as Record<string, JsonObject> | undefined;
  const attempts = (schemas?.WebhookEvent?.properties as Record<string, JsonObject> | undefined)?.attempts;
  const limit = attempts?.maxItems;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) throw new Error("the contract's WebhookEvent.attempts states no maxItems");
  return limit;
}
