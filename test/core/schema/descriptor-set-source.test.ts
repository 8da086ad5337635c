import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type DescriptorProto,
  FileDescriptorSetSchema,
  TimestampSchema,
  timestampFromDate,
} from "@bufbuild/protobuf/wkt";
import { getComments } from "@bufbuild/protoplugin";
import { ProtocallError } from "../../../src/core/errors";
import {
  type DescriptorSetSource,
  openDescriptorSetBytes,
  openDescriptorSetFile,
} from "../../../src/core/schema/descriptor-set-source";
import { runBuf } from "../../support/buf";
import { repoRoot, runProcess } from "../../support/cli";
import { acmeFiles, buildSet, reorderSet, writeModule } from "./descriptor-set-fixtures";

let image: Uint8Array;
let tmp: string;

before(async () => {
  image = await buildSet(acmeFiles);
  tmp = mkdtempSync(join(tmpdir(), "protocall-dss-"));
});

after(() => rmSync(tmp, { recursive: true, force: true }));

/** Exercises a source the way the invoker does: resolve a method and encode its input. */
async function checkSource(source: DescriptorSetSource) {
  assert.deepEqual(await source.listServices(), ["acme.v1.ShopService", "other.v2.OtherService"]);
  const service = await source.findType("acme.v1.ShopService");
  assert.equal(service?.kind, "service");
  const buy = service.methods.find((m) => m.name === "Buy");
  assert.ok(buy);
  assert.equal(buy.input.typeName, "acme.v1.BuyRequest");
  const message = create(buy.input, {
    price: { currency: "EUR", units: 12n, detail: { kind: 1 } },
    level: 1,
    stamp: { at: timestampFromDate(new Date(1_700_000_000_000)) },
  });
  const back = fromBinary(buy.input, toBinary(buy.input, message));
  assert.deepEqual(back, message);
  assert.equal(buy.output.typeName, "acme.v1.BuyResponse");
  const stampField = (await source.findType("acme.v1.Stamp"))?.kind === "message";
  assert.ok(stampField);
}

describe("openDescriptorSetBytes", () => {
  test("resolves services, methods and messages ready to encode", async () => {
    const source = openDescriptorSetBytes(image, "test image");
    assert.equal(source.label, "test image");
    await checkSource(source);
    await source.close();
  });

  test("finds nested messages, enums and extensions; undefined for unknown names", async () => {
    const source = openDescriptorSetBytes(image, "test image");
    assert.equal((await source.findType("acme.v1.Money.Detail"))?.kind, "message");
    const kind = await source.findType(".acme.v1.Money.Detail.Kind");
    assert.equal(kind?.kind, "enum");
    assert.deepEqual(
      kind.values.map((v) => v.name),
      ["KIND_UNSPECIFIED", "CASH"],
    );
    assert.equal((await source.findType("acme.v1.Level"))?.kind, "enum");
    assert.equal((await source.findType("acme.ext.v1.audit"))?.kind, "extension");
    assert.equal(await source.findType("acme.v1.Nope"), undefined);
    assert.equal(await source.findType("nope"), undefined);

    const audit = await source.findExtension("google.protobuf.MethodOptions", 50001);
    assert.equal(audit?.typeName, "acme.ext.v1.audit");
    assert.equal(audit.extendee.typeName, "google.protobuf.MethodOptions");
    const weight = await source.findExtension("acme.ext.v1.Box", 100);
    assert.equal(weight?.typeName, "acme.ext.v1.Box.weight");
    assert.equal(await source.findExtension("acme.ext.v1.Box", 101), undefined);
    await source.close();
  });

  test("decodes without source info for look-ups, with it for findFile", async () => {
    const source = openDescriptorSetBytes(image, "test image");
    const service = await source.findType("acme.v1.ShopService");
    assert.equal(service?.kind, "service");
    assert.equal(service.file.proto.sourceCodeInfo, undefined);

    const file = await source.findFile("acme.v1.ShopService");
    assert.equal(file?.proto.name, "acme/v1/shop.proto");
    const documented = file.services[0];
    assert.equal(getComments(documented).leading, " The shop.\n");
    assert.equal(getComments(documented.methods[0]).leading, " Buys something.\n");
    // common.proto was linked as an import of shop.proto first: asked for by name, it still has
    // its comments.
    const common = await source.findFile("acme.v1.Money.Detail");
    assert.equal(common?.proto.name, "acme/v1/common.proto");
    const money = common.messages.find((m) => m.name === "Money");
    assert.ok(money, "Money in common.proto");
    assert.equal(getComments(money).leading, " A money amount.\n");
    assert.equal(await source.findFile("acme.v1.Nope"), undefined);
    assert.equal(await source.findFile("acme.v1.ShopService"), file, "cached");
    await source.close();
  });

  test("files in any order, well-known imports missing from the set", async () => {
    const reversed = reorderSet(image, (files) => [...files].reverse());
    await checkSource(openDescriptorSetBytes(reversed, "reversed"));
    const withoutWkt = reorderSet(image, (files) =>
      files.filter((f) => !f.name.startsWith("google/protobuf/")).sort(() => -1),
    );
    assert.ok(
      fromBinary(FileDescriptorSetSchema, withoutWkt).file.every((f) => !f.name.startsWith("google/")),
    );
    const source = openDescriptorSetBytes(withoutWkt, "no wkt");
    await checkSource(source);
    const stamp = await source.findType("acme.v1.Stamp");
    assert.equal(stamp?.kind, "message");
    assert.equal(stamp.fields[0].message?.typeName, "google.protobuf.Timestamp");
    assert.equal((await source.findExtension("google.protobuf.MethodOptions", 50001))?.name, "audit");
  });

  test("a missing import is an error naming both files", async () => {
    const broken = reorderSet(image, (files) => files.filter((f) => f.name !== "acme/v1/common.proto"));
    const source = openDescriptorSetBytes(broken, "broken set");
    assert.deepEqual(await source.listServices(), ["acme.v1.ShopService", "other.v2.OtherService"]);
    await assert.rejects(source.findType("acme.v1.ShopService"), (err: unknown) => {
      assert.ok(err instanceof ProtocallError);
      assert.match(err.message, /broken set/);
      assert.match(
        err.message,
        /"acme\/v1\/shop\.proto" imports "acme\/v1\/common\.proto", which is missing/,
      );
      return true;
    });
    // Files that do not need the missing one still work.
    assert.equal((await source.findType("other.v2.OtherService"))?.kind, "service");
  });

  test("decodes only what a look-up needs: a damaged unrelated file does not matter", async () => {
    const set = fromBinary(FileDescriptorSetSchema, image);
    const other = set.file.findIndex((f) => f.name === "other/v2/other.proto");
    // Put a malformed options message into other.proto: the scan skips options, fromBinary cannot.
    const damaged = new Uint8Array([...toBinary(FileDescriptorSetSchema, set)]);
    const marker = new TextEncoder().encode("other/v2/other.proto");
    const at = indexOf(damaged, marker);
    assert.ok(at > 0 && other >= 0);
    const bytes = spliceOptions(damaged, at - 2);
    const source = openDescriptorSetBytes(bytes, "damaged");
    await checkSourceWithoutOther(source);
    await assert.rejects(source.findType("other.v2.OtherService"), (err: unknown) => {
      assert.ok(err instanceof ProtocallError);
      assert.match(err.message, /damaged: file "other\/v2\/other\.proto" is not a valid FileDescriptorProto/);
      return true;
    });
  });

  test("look-ups share descriptors: a message reached twice is the same object", async () => {
    const source = openDescriptorSetBytes(image, "shared");
    const request = await source.findType("acme.v1.BuyRequest");
    const money = await source.findType("acme.v1.Money");
    assert.equal(request?.kind, "message");
    assert.equal(request.fields[0].message, money);
    const service = await source.findType("acme.v1.ShopService");
    assert.equal(service?.kind, "service");
    assert.equal(service.methods[0].input, request);
    // Without well-known files in the set, the runtime's own are used.
    const noWkt = openDescriptorSetBytes(
      reorderSet(image, (files) => files.filter((f) => !f.name.startsWith("google/protobuf/"))),
      "no wkt",
    );
    const stamp = await noWkt.findType("acme.v1.Stamp");
    assert.equal(stamp?.kind, "message");
    assert.equal(stamp.fields[0].message, TimestampSchema);
  });

  test("sloppy descriptors go through the lenient linker: relative names, no json_name", async () => {
    const sloppy = reorderSet(image, (files) => {
      for (const file of files) {
        const fix = (m: DescriptorProto) => {
          for (const f of m.field) {
            f.typeName = f.typeName.replace(/^\./, "");
            f.jsonName = "";
          }
          m.nestedType.forEach(fix);
        };
        file.messageType.forEach(fix);
        for (const s of file.service) {
          for (const m of s.method) {
            m.inputType = m.inputType.replace(/^\./, "");
            m.outputType = m.outputType.replace(/^\./, "");
          }
        }
      }
      return files;
    });
    const source = openDescriptorSetBytes(sloppy, "sloppy");
    await checkSource(source);
    const request = await source.findType("acme.v1.BuyRequest");
    assert.equal(request?.kind, "message");
    assert.equal(request.fields[0].jsonName, "price");
    assert.equal(request.fields[0].message?.typeName, "acme.v1.Money");
  });

  test("a type used without importing its file is still found", async () => {
    const unimported = reorderSet(image, (files) => {
      const shop = files.find((f) => f.name === "acme/v1/shop.proto")!;
      shop.dependency = shop.dependency.filter((d) => d !== "acme/v1/common.proto");
      return files;
    });
    await checkSource(openDescriptorSetBytes(unimported, "unimported"));
  });

  test("an import cycle is an error naming the files", async () => {
    const cyclic = reorderSet(image, (files) => {
      files.find((f) => f.name === "acme/v1/common.proto")!.dependency.push("acme/v1/shop.proto");
      return files;
    });
    const source = openDescriptorSetBytes(cyclic, "cyclic");
    await assert.rejects(source.findType("acme.v1.ShopService"), (err: unknown) => {
      assert.ok(err instanceof ProtocallError);
      assert.match(err.message, /cyclic.*import cycle/);
      assert.match(err.message, /acme\/v1\/shop\.proto/);
      return true;
    });
  });

  test("close releases it; later calls fail clearly; closing twice is fine", async () => {
    const source = openDescriptorSetBytes(image, "closing");
    await source.close();
    await source.close();
    await assert.rejects(source.listServices(), /closing is closed/);
  });
});

describe("openDescriptorSetFile", () => {
  test("every format by content, whatever the file name", async () => {
    const dir = writeModule(acmeFiles);
    try {
      const outputs = ["image.bin", "fds.txt", "set.json"];
      for (const [out, args] of [
        ["image.bin", []],
        ["fds.txt", ["--as-file-descriptor-set"]],
        ["set.json", []],
      ] as const) {
        const r = await runBuf(["build", dir, "-o", join(tmp, out), ...args], { timeoutMs: 30_000 });
        assert.equal(r.code, 0, r.stderr);
      }
      for (const out of outputs) {
        const path = join(tmp, out);
        const source = await openDescriptorSetFile(path);
        assert.equal(source.label, `descriptor set ${path}`);
        await checkSource(source);
        await source.close();
      }
      assert.equal((await openDescriptorSetFile(join(tmp, "set.json"))).index.format, "json-set");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a real plugin request, as buf generate hands it to a plugin", async () => {
    const dir = writeModule(acmeFiles);
    try {
      const plugin = join(tmp, "protoc-gen-capture");
      const captured = join(tmp, "request.bin");
      writeFileSync(plugin, `#!/bin/sh\ncat > "${captured}"\n`);
      chmodSync(plugin, 0o755);
      writeFileSync(
        join(dir, "buf.gen.yaml"),
        `version: v2\nplugins:\n  - local: ${plugin}\n    out: gen\n    opt: mode=test\n    strategy: all\n`,
      );
      const r = await runBuf(["generate", dir, "--template", join(dir, "buf.gen.yaml"), "-o", dir], {
        timeoutMs: 30_000,
      });
      assert.equal(r.code, 0, r.stderr);
      const source = await openDescriptorSetFile(captured);
      assert.equal(source.index.format, "plugin-request");
      assert.equal(source.index.parameter, "mode=test");
      assert.deepEqual([...source.index.filesToGenerate].sort(), Object.keys(acmeFiles).sort());
      await checkSource(source);
      // Plugins get source info: findFile has the comments.
      const file = await source.findFile("acme.v1.Money");
      assert.equal(getComments(file!.messages[0]).leading, " A money amount.\n");
      await source.close();
      // The same bytes from memory (stdin).
      await checkSource(openDescriptorSetBytes(readFileSync(captured), "descriptor set from stdin"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a pipe such as /dev/stdin is read through, not with positioned reads", async () => {
    const script = join(tmp, "list-services.ts");
    const module = join(repoRoot, "src/core/schema/descriptor-set-source.ts");
    writeFileSync(
      script,
      `import { openDescriptorSetFile } from ${JSON.stringify(module)};\n` +
        "openDescriptorSetFile(process.argv[2]).then(async (s) => {\n" +
        "  console.log((await s.listServices()).join(','));\n" +
        "  await s.close();\n" +
        "}, (e) => { console.error(e.message); process.exit(1); });\n",
    );
    const set = join(tmp, "piped.binpb");
    writeFileSync(set, image);
    // A shell pipe, as in `cat set.binpb | protocall … --schema /dev/stdin`.
    const node = JSON.stringify(process.execPath);
    const run = (input: string) =>
      runProcess("/bin/sh", ["-c", `${input} | ${node} --import tsx ${JSON.stringify(script)} /dev/stdin`], {
        timeoutMs: 20_000,
      });
    const ok = await run(`cat ${JSON.stringify(set)}`);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout.trim(), "acme.v1.ShopService,other.v2.OtherService");
    const empty = await run("true");
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /descriptor set \/dev\/stdin is empty/);
  });

  test("bad files: one ProtocallError naming the file", async () => {
    const random = join(tmp, "random.protoset");
    writeFileSync(random, new Uint8Array([0xde, 0xad, 0xbe, 0xef, 0x00, 0x01]));
    await assert.rejects(openDescriptorSetFile(random), (err: unknown) => {
      assert.ok(err instanceof ProtocallError);
      assert.match(err.message, /^descriptor set .*random\.protoset is not a descriptor set/);
      return true;
    });
    await assert.rejects(openDescriptorSetFile(tmp), /is a directory/);
    await assert.rejects(openDescriptorSetFile(join(tmp, "gone.pb")), /gone\.pb does not exist/);
    const truncated = join(tmp, "truncated.binpb");
    writeFileSync(truncated, image.subarray(0, image.length - 10));
    await assert.rejects(openDescriptorSetFile(truncated), /truncated\.binpb .*truncated/);
  });
});

async function checkSourceWithoutOther(source: DescriptorSetSource) {
  assert.deepEqual(await source.listServices(), ["acme.v1.ShopService", "other.v2.OtherService"]);
  const service = await source.findType("acme.v1.ShopService");
  assert.equal(service?.kind, "service");
  const buy = service.methods[0];
  assert.equal(toBinary(buy.input, create(buy.input, { level: 1 })).length, 2);
}

function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  return Buffer.from(hay).indexOf(Buffer.from(needle));
}

/**
 * Inserts a FileOptions field (8) holding an invalid wire type right after the file's name field,
 * fixing the file's length prefix. `nameTag` is the offset of the name's tag (0x0a).
 */
function spliceOptions(set: Uint8Array, nameTag: number): Uint8Array {
  // Find the file's own tag and length just before its name: 0x0a <len varint> 0x0a <name len> ...
  let lenStart = nameTag - 1;
  while (lenStart > 0 && set[lenStart - 1] >= 0x80) lenStart--;
  const fileTag = lenStart - 1;
  assert.equal(set[fileTag], 0x0a);
  let len = 0;
  let mul = 1;
  let p = lenStart;
  for (;;) {
    const b = set[p++];
    len += (b & 0x7f) * mul;
    mul *= 128;
    if (b < 0x80) break;
  }
  const insert = [0x42, 0x02, 0x0f, 0x00]; // options (8), 2 bytes: wire type 7
  const body = [...set.subarray(p, p + len), ...insert];
  const newLen: number[] = [];
  for (let n = body.length; ; n = Math.floor(n / 128)) {
    if (n < 0x80) {
      newLen.push(n);
      break;
    }
    newLen.push((n & 0x7f) | 0x80);
  }
  return new Uint8Array([...set.subarray(0, fileTag), 0x0a, ...newLen, ...body, ...set.subarray(p + len)]);
}
