// Finding the .proto file on disk behind a schema file name.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ProtoLocator } from "../../../src/core/schema/proto-locator";

describe("ProtoLocator", () => {
  let dir: string;
  const write = (rel: string) => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), 'syntax = "proto3";\n');
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "protocall-locator-"));
    write("api/proto/acme/v1/shop.proto");
    write("copy/deeper/acme/v1/shop.proto");
    write("node_modules/x/acme/v1/hidden.proto");
    write(".git/acme/v1/hidden.proto");
    write("other/acme/v1/other.proto");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("resolves a name below a module folder, the shortest path first, folders in order", async () => {
    const l = new ProtoLocator();
    assert.equal(await l.locate("acme/v1/shop.proto", [dir]), join(dir, "api/proto/acme/v1/shop.proto"));
    assert.equal(
      await l.locate("acme/v1/shop.proto", [join(dir, "copy"), dir]),
      join(dir, "copy/deeper/acme/v1/shop.proto"),
    );
    assert.equal(
      await l.locate("acme/v1/other.proto", [join(dir, "api"), dir]),
      join(dir, "other/acme/v1/other.proto"),
    );
  });

  it("skips node_modules and hidden folders, and never resolves unsafe or partial names", async () => {
    const l = new ProtoLocator();
    assert.equal(await l.locate("acme/v1/hidden.proto", [dir]), undefined);
    assert.equal(await l.locate("v1/shop", [dir]), undefined);
    assert.equal(await l.locate("hop.proto", [dir]), undefined);
    assert.equal(await l.locate("../acme/v1/shop.proto", [dir]), undefined);
    assert.equal(await l.locate("/acme/v1/shop.proto", [dir]), undefined);
    assert.equal(await l.locate("acme/v1/shop.proto", [join(dir, "missing")]), undefined);
  });
});
