import { randomBytes } from "node:crypto";

/** Parcels worth this much or more go express: a lost one costs more than the upgrade. */
export const EXPRESS_FROM_CENTS = 100_000;

export interface CarrierChoice {
  carrier: "express" | "standard";
  trackingCode: string;
}

/** Picks the carrier for an invoice's amount and books a tracking code with it. */
export function bookCarrier(amountCents: number): CarrierChoice {
  const carrier = amountCents >= EXPRESS_FROM_CENTS ? "express" : "standard";
  return { carrier, trackingCode: `${carrier === "express" ? "EXP" : "STD"}-${randomBytes(5).toString("hex").toUpperCase()}` };
}
