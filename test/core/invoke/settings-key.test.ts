import assert from "node:assert/strict";
import { test } from "node:test";
import { settingsKey } from "../../../src/core/invoke/settings-key";

test("a settings object is its own key: member order and undefined members do not matter, values do", () => {
  const a = { baseUrl: "http://h:1", tls: { cacert: "ca.pem", insecure: undefined }, headers: [["a", "1"]] };
  const b = { headers: [["a", "1"]], tls: { cacert: "ca.pem" }, baseUrl: "http://h:1" };
  assert.equal(settingsKey(a), settingsKey(b));
  assert.notEqual(settingsKey(a), settingsKey({ ...b, tls: { cacert: "other.pem" } }));
  assert.notEqual(settingsKey(a), settingsKey({ ...b, headers: [["a", "2"]] }));
  // Array order is meaning (headers, schemas in order), so it counts.
  assert.notEqual(settingsKey({ schemas: ["x", "y"] }), settingsKey({ schemas: ["y", "x"] }));
  // A new setting is in the key without anyone listing it.
  assert.notEqual(settingsKey(b), settingsKey({ ...b, keepaliveMs: 60_000 }));
});
