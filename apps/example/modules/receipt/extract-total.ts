export class ReceiptUnreadable extends Error {
  override name = "ReceiptUnreadable";
}

/**
 * Finds the total in a receipt's text ("TOTAL: $1,234.50"). Throws ReceiptUnreadable when there is none:
 * the job fails, is retried, and ends in dead letters where an operator sees why.
 */
export function extractTotalCents(text: string): number {
  const match = /total\s*:?\s*\$?\s*(\d[\d,]*(?:\.\d{1,2})?)/i.exec(text);
  if (!match) throw new ReceiptUnreadable(`no total found in receipt text "${text.slice(0, 40)}"`);
  return Math.round(Number(match[1]!.replaceAll(",", "")) * 100);
}
