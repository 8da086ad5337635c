import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findNetrcEntry, parseNetrc } from "../../../src/core/invoke/netrc";

describe("parseNetrc", () => {
  it("reads entries on one line or many, with comments, account and macdef", () => {
    const entries = parseNetrc(
      [
        "# my credentials",
        "machine a.example.com login ada password s3cret",
        "machine b.example.com:8443",
        "  login bob  # trailing comment",
        "  account acct",
        '  password "p w\\"d"',
        "macdef init",
        "cd /pub",
        "",
        "default login anon password guest",
      ].join("\n"),
    );
    assert.deepEqual(entries, [
      { machine: "a.example.com", login: "ada", password: "s3cret", line: 2 },
      { machine: "b.example.com:8443", login: "bob", password: 'p w"d', line: 3 },
      { login: "anon", password: "guest", line: 10 },
    ]);
  });

  it("handles CRLF files and tabs", () => {
    assert.deepEqual(parseNetrc("machine h\r\n\tlogin u\r\n\tpassword p\r\n"), [
      { machine: "h", login: "u", password: "p", line: 1 },
    ]);
  });
});

describe("findNetrcEntry", () => {
  const entries = parseNetrc(
    "default login d password dp\nmachine h login plain password pp\nmachine h:8443 login port password ppp\n",
  );

  it("looks up the host including the port, case-insensitively", () => {
    assert.equal(findNetrcEntry(entries, "h:8443")?.login, "port");
    assert.equal(findNetrcEntry(entries, "H")?.login, "plain");
  });

  it("falls back to the default entry, wherever it is", () => {
    assert.equal(findNetrcEntry(entries, "h:9000")?.login, "d");
    assert.equal(findNetrcEntry(entries, "other")?.login, "d");
    assert.equal(findNetrcEntry(parseNetrc("machine x login a password b"), "y"), undefined);
  });
});
