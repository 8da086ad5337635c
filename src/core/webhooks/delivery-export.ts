// Exporting stored deliveries: each as its opened JSON document plus the raw body (base64), oldest
// first, either one JSON object per line (JSON Lines) or one JSON array.
import { deliveryDocument } from "./delivery-summary";
import type { StoredDelivery } from "./store";

export type ExportFormat = "jsonl" | "json";

/** The text of an export file. */
export function exportDeliveries(deliveries: readonly StoredDelivery[], format: ExportFormat): string {
  const docs = deliveries.map((d) => ({ ...deliveryDocument(d), body: d.body }));
  if (format === "json") return `${JSON.stringify(docs, null, 2)}\n`;
  return docs.map((doc) => `${JSON.stringify(doc)}\n`).join("");
}

/** The format a file name suggests: `.jsonl` / `.ndjson` → JSON Lines, anything else → a JSON array. */
export function exportFormatOf(fileName: string): ExportFormat {
  return /\.(jsonl|ndjson)$/i.test(fileName) ? "jsonl" : "json";
}
