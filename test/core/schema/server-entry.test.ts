// Checking "Add server…" input: the URL and the headers.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  normalizeServerUrl,
  parseHeaderInput,
  serverUrlProblem,
} from "../../../src/core/schema/server-entry";

describe("server entry input", () => {
  it("accepts http and https base URLs, with a port or a path prefix", () => {
    for (const u of ["http://127.0.0.1:8080", "https://api.example.com", "http://localhost:1/api/"]) {
      assert.equal(serverUrlProblem(u), undefined, u);
    }
    assert.equal(normalizeServerUrl(" http://localhost:1/api/ "), "http://localhost:1/api");
  });

  it("says how to fix a URL that cannot be used", () => {
    assert.match(serverUrlProblem("") ?? "", /Enter the server's base URL/);
    assert.equal(
      serverUrlProblem("localhost:8080"),
      "Add the scheme: http://localhost:8080 (plain text) or https://localhost:8080 (TLS)",
    );
    assert.match(serverUrlProblem("ftp://x") ?? "", /must start with http:\/\/ or https:\/\//);
    assert.match(serverUrlProblem("http://x/?a=1") ?? "", /Remove the query/);
    assert.match(serverUrlProblem("http://u:p@x") ?? "", /credentials/);
    assert.match(serverUrlProblem("not a url") ?? "", /is not a URL/);
  });

  it("splits headers on ; or new lines, checked as -H values", () => {
    assert.deepEqual(parseHeaderInput(""), { headers: [] });
    assert.deepEqual(parseHeaderInput("Authorization: Bearer x; x-team:blue"), {
      headers: ["Authorization: Bearer x", "x-team: blue"],
    });
    assert.match(parseHeaderInput("no colon").problem ?? "", /malformed header/);
    assert.match(parseHeaderInput("content-type: x").problem ?? "", /set by the RPC protocol/);
  });
});
