// The "did you mean" rule shared by every suggestion (services, fields, request options, flags).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { closest, editDistance } from "../../src/core/closest";

describe("closest", () => {
  test("suggests by case, simple name and small edits, at most three", () => {
    assert.deepEqual(closest("greetservice", ["GreetService", "Other"]), ["GreetService"]);
    assert.deepEqual(closest("GreetService", ["acme.v1.GreetService", "acme.v1.AdminService"]), [
      "acme.v1.GreetService",
    ]);
    assert.deepEqual(closest("Gret", ["Greet", "Farewell"]), ["Greet"]);
    assert.deepEqual(closest("Xyzzy", ["Greet", "Farewell"]), []);
    assert.equal(closest("a", ["b", "c", "d", "e"]).length, 3);
  });
});

describe("editDistance", () => {
  test("counts insertions, deletions, substitutions and swaps", () => {
    assert.equal(editDistance("port", "port"), 0);
    assert.equal(editDistance("prot", "port"), 1, "a swap of neighbours is one edit");
    assert.equal(editDistance("ca", "abc"), 3);
    assert.equal(editDistance("protcol", "protocol"), 1);
    assert.equal(editDistance("", "abc"), 3);
  });
});
