import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { offsetIn, parseRpcFile, positionIn } from "../../../src/core/rpcfile/parse";
import { methodRequestText, serviceRequestFile } from "../../../src/core/rpcfile/serialize";
import { messageSkeleton } from "../../../src/core/schema/skeleton";
import { DemoService } from "../../../src/gen/demo/v1/demo_pb";

describe("serialize", () => {
  test("a method's request: name, streaming note, protocol option, URL with the host variable, skeleton", () => {
    const sum = DemoService.methods.find((m) => m.name === "Sum");
    assert.ok(sum);
    const text = methodRequestText(sum, { protocol: "grpcweb", hostVariable: "api" });
    assert.equal(
      text,
      [
        "### Sum",
        "# Client streaming: write one JSON document per request message.",
        "# @protocol grpcweb",
        "{{api}}/demo.v1.DemoService/Sum",
        "",
        JSON.stringify(messageSkeleton(sum.input), null, 2),
        "",
      ].join("\n"),
    );
  });

  test("a service file parses back without diagnostics, one request per method, deprecated methods marked", () => {
    const text = serviceRequestFile(DemoService, { host: "http://127.0.0.1:1" });
    const f = parseRpcFile(text);
    assert.deepEqual(f.diagnostics, []);
    assert.deepEqual(
      f.variables.map((v) => [v.name.text, v.value.text]),
      [["host", "http://127.0.0.1:1"]],
    );
    assert.deepEqual(
      f.requests.map((r) => r.name?.text),
      DemoService.methods.map((m) => m.name),
    );
    const old = f.requests.find((r) => r.name?.text === "OldEcho");
    assert.deepEqual(
      old?.comments.map((c) => c.text),
      ["# Deprecated."],
    );
    assert.match(text, /^# Requests for demo\.v1\.DemoService\.\n@host = /);
  });
});

describe("positions in documents", () => {
  test("offsetIn is the inverse of positionIn, clamped to the text", () => {
    const text = '{"a": 1,\n  "b": [\n2]}';
    const start = { line: 7, character: 4 };
    for (let offset = 0; offset <= text.length; offset++) {
      assert.equal(offsetIn(text, start, positionIn(text, start, offset)), offset);
    }
    assert.equal(offsetIn(text, start, { line: 3, character: 0 }), 0);
    assert.equal(offsetIn(text, start, { line: 7, character: 99 }), 8);
    assert.equal(offsetIn(text, start, { line: 20, character: 0 }), text.length);
  });
});
