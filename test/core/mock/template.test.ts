// Filling `{{...}}` in stub answers: a text whose value cannot change between calls is filled once and
// reused, and every text whose value can change (a request value, a generator, the process
// environment) is filled again on every call. A reloaded file's variables are new ones, so its
// texts are filled afresh.
import assert from "node:assert/strict";
import { test } from "node:test";
import { outcomeOf } from "../../../src/core/mock/stub-match";
import { fillTemplate, type TemplateScope } from "../../../src/core/mock/template";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";

function scopeOf(fileText: string, env: NodeJS.ProcessEnv = {}, name = "world"): TemplateScope {
  return {
    outcome: outcomeOf({ headers: [["x-tenant", "acme"]], messages: [{ name }] }),
    variables: parseRpcFile(fileText).variables,
    env,
    where: "greet.rpc",
  };
}

test("file variables are filled, and the same text with the same variables gives the same value", () => {
  const scope = scopeOf("@greeting = Hello\n@whom = {{greeting}} all\n");
  const text = '{"greeting": "{{whom}}!"}';
  assert.equal(fillTemplate(text, scope, true), '{"greeting": "Hello all!"}');
  assert.equal(fillTemplate(text, scope, true), '{"greeting": "Hello all!"}');
});

test("a reloaded file (new variables) is filled with its new values, not the old file's", () => {
  const text = '{"greeting": "{{greeting}}, world!"}';
  assert.equal(fillTemplate(text, scopeOf("@greeting = Hello\n"), true), '{"greeting": "Hello, world!"}');
  assert.equal(fillTemplate(text, scopeOf("@greeting = Hi\n"), true), '{"greeting": "Hi, world!"}');
});

test("generators give a fresh value on every fill, alone or through a file variable", async () => {
  const scope = scopeOf("@id = id-{{$uuid}}\n");
  for (const text of ['{"greeting": "{{$uuid}}"}', '{"greeting": "{{id}}"}', "{{$randomInt 0 1000000000}}"]) {
    const values = new Set(Array.from({ length: 5 }, () => fillTemplate(text, scope, text.startsWith('{"'))));
    assert.equal(values.size, 5, `${text} gave ${[...values].join(", ")}`);
  }
  const stamp = scopeOf("");
  const first = fillTemplate("{{$isoTimestamp}}", stamp, false);
  const later = () => fillTemplate("{{$isoTimestamp}}", stamp, false) !== first;
  await new Promise((r) => setTimeout(r, 5));
  assert.ok(later(), "$isoTimestamp kept its first value");
});

test("the process environment is read on every fill", () => {
  const env: NodeJS.ProcessEnv = { REGION: "eu" };
  const scope = scopeOf("@region = {{$env REGION}}\n", env);
  assert.equal(fillTemplate("served from {{region}}", scope, false), "served from eu");
  env.REGION = "us";
  assert.equal(fillTemplate("served from {{region}}", scope, false), "served from us");
});

test("values of the request are filled per request; errors name the file and line", () => {
  const text = '{"greeting": "{{greeting}}, {{request.name}}"}';
  const vars = "@greeting = Hello\n";
  assert.equal(fillTemplate(text, scopeOf(vars, {}, "ann"), true), '{"greeting": "Hello, ann"}');
  const scope = scopeOf(vars, {}, "bob");
  assert.equal(fillTemplate(text, scope, true), '{"greeting": "Hello, bob"}');
  assert.throws(
    () => fillTemplate("{{request.nope}}", scope, false, 12),
    /^ProtocallError: greet\.rpc:12: \{\{request\.nope\}\} leads to nothing/,
  );
  assert.throws(
    () => fillTemplate("{{missing}}", scope, false, 7),
    /greet\.rpc:7: undefined variable \{\{missing\}\}/,
  );
});
