// Property test of the whole request pipeline (parse, resolve, convert, copy as): over 20,000
// generated files, nothing throws and every diagnostic lies within the text.
import assert from "node:assert/strict";
import { test } from "node:test";
import { copyAsBufCurl, copyAsGrpcurl, copyAsProtocallCurl } from "../../../src/core/rpcfile/copy-as";
import { curlToRequestText } from "../../../src/core/rpcfile/from-curl";
import { parseRpcFile, splitLines } from "../../../src/core/rpcfile/parse";
import { requestToCurl } from "../../../src/core/rpcfile/to-curl";
import { VariableResolver } from "../../../src/core/rpcfile/variables";
import { generate, rng } from "./fuzz-inputs";

test("parse, resolve, convert and copy never throw over 20,000 generated files", { timeout: 120_000 }, () => {
  const seed = 7;
  const next = rng(seed);
  let converted = 0;
  let diagnostics = 0;
  for (let i = 0; i < 20_000; i++) {
    const text = generate(next);
    const lines = splitLines(text);
    const file = parseRpcFile(text);
    for (const request of file.requests) {
      const r = requestToCurl(file, request, {
        baseDir: "/nonexistent",
        variables: new VariableResolver({
          fileVariables: file.variables,
          environment: { t: "5s", host: "http://127.0.0.1:1" },
          environmentName: "dev",
          processEnv: {},
          dotenv: { TOKEN: "x" },
        }),
        readFile: (path) => {
          if (path.endsWith("file.json")) return '{"a": 1}';
          throw Object.assign(new Error("no such file"), { code: "ENOENT" });
        },
      });
      for (const d of r.diagnostics) {
        diagnostics++;
        const ok = (p: { line: number; character: number }) =>
          p.line >= 0 && p.line < lines.length && p.character >= 0 && p.character <= lines[p.line].length;
        if (!ok(d.range.start) || !ok(d.range.end)) {
          assert.fail(`diagnostic out of the text ${JSON.stringify(d)}; input ${i}: ${JSON.stringify(text)}`);
        }
      }
      if (r.options) {
        converted++;
        assert.equal(r.diagnostics.filter((d) => d.severity === "error").length, 0);
        copyAsProtocallCurl(r.options);
        copyAsBufCurl(r.options);
        copyAsGrpcurl(r.options);
        parseRpcFile(curlToRequestText(r.options, request.name?.text));
      } else {
        assert.ok(
          r.diagnostics.some((d) => d.severity === "error"),
          `no options and no error; input ${i}`,
        );
      }
    }
  }
  assert.ok(converted > 100, `only ${converted} requests converted`);
  assert.ok(diagnostics > 1000, `only ${diagnostics} diagnostics`);
});
