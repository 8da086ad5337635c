// `--data FILE.csv|FILE.jsonl` for a load run: rows of variables, one row per request in turn (the
// rows repeat when the run outlasts them). CSV: a header row of names, then values (RFC 4180 quoting);
// JSON Lines: one object per line, values that are not strings as JSON text.
import { readFileSync } from "node:fs";
import { ProtocallError } from "../errors";

export type Row = Record<string, string>;

export function readDataRows(path: string, shown: string): Row[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ProtocallError(
      `--data ${shown}: cannot read it: ${code === "ENOENT" ? "no such file" : (code ?? String(err))}`,
    );
  }
  const rows = /\.jsonl$|\.ndjson$/i.test(path)
    ? jsonlRows(text, shown)
    : /\.csv$/i.test(path)
      ? csvRows(text, shown)
      : undefined;
  if (!rows)
    throw new ProtocallError(
      `--data ${shown}: name a .csv file (a header row, then values) or a .jsonl file (one JSON object per line)`,
    );
  if (rows.length === 0) throw new ProtocallError(`--data ${shown}: it holds no rows`);
  return rows;
}

function jsonlRows(text: string, shown: string): Row[] {
  const rows: Row[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      throw new ProtocallError(
        `--data ${shown}:${i + 1}: not JSON (${(err as Error).message}); write one object per line`,
      );
    }
    if (v === null || typeof v !== "object" || Array.isArray(v)) {
      throw new ProtocallError(`--data ${shown}:${i + 1}: write a JSON object ({"name": "value"}) per line`);
    }
    rows.push(
      Object.fromEntries(
        Object.entries(v).map(([k, x]) => [k, typeof x === "string" ? x : JSON.stringify(x)]),
      ),
    );
  });
  return rows;
}

/** Splits CSV text into records of fields (quotes, doubled quotes, CRLF). */
function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") {
      record.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      record.push(field);
      records.push(record);
      record = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records.filter((r) => !(r.length === 1 && r[0] === ""));
}

function csvRows(text: string, shown: string): Row[] {
  const [header, ...records] = csvRecords(text);
  if (!header) return [];
  return records.map((r, i) => {
    if (r.length !== header.length) {
      throw new ProtocallError(
        `--data ${shown}:${i + 2}: ${r.length} values for ${header.length} columns (${header.join(", ")})`,
      );
    }
    return Object.fromEntries(header.map((name, j) => [name.trim(), r[j]]));
  });
}
