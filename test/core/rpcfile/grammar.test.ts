// The TextMate grammar and language configuration of .rpc files: valid JSON with the expected
// structure, every include resolvable, every regex valid in JavaScript (no Oniguruma-only syntax),
// and the line patterns matching the constructs of the format with the right captures.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { repoRoot } from "../../support/cli";

interface Rule {
  name?: string;
  match?: string;
  begin?: string;
  end?: string;
  include?: string;
  patterns?: Rule[];
  captures?: Record<string, Rule>;
  beginCaptures?: Record<string, Rule>;
  endCaptures?: Record<string, Rule>;
}

interface Grammar {
  scopeName: string;
  name: string;
  fileTypes: string[];
  patterns: Rule[];
  repository: Record<string, Rule>;
  injections?: Record<string, Rule>;
}

const grammar = JSON.parse(readFileSync(join(repoRoot, "syntaxes/rpc.tmLanguage.json"), "utf8")) as Grammar;
const config = JSON.parse(readFileSync(join(repoRoot, "language-configuration.json"), "utf8"));

/** Every rule of the grammar, with where it is. */
function allRules(): { rule: Rule; where: string }[] {
  const out: { rule: Rule; where: string }[] = [];
  const visit = (rule: Rule, where: string) => {
    out.push({ rule, where });
    for (const [i, r] of (rule.patterns ?? []).entries()) visit(r, `${where}.patterns[${i}]`);
    for (const key of ["captures", "beginCaptures", "endCaptures"] as const) {
      for (const [n, r] of Object.entries(rule[key] ?? {})) visit(r, `${where}.${key}[${n}]`);
    }
  };
  for (const [i, r] of grammar.patterns.entries()) visit(r, `patterns[${i}]`);
  for (const [k, r] of Object.entries(grammar.repository)) visit(r, `repository.${k}`);
  for (const [k, r] of Object.entries(grammar.injections ?? {})) visit(r, `injections[${k}]`);
  return out;
}

const regex = (name: string, key: "match" | "begin" | "end" = "match") => {
  const source = grammar.repository[name][key];
  assert.ok(source, `${name}.${key}`);
  return new RegExp(source);
};

describe("rpc.tmLanguage.json", () => {
  test("has the top-level structure of a TextMate grammar for source.rpc", () => {
    assert.equal(grammar.scopeName, "source.rpc");
    assert.equal(typeof grammar.name, "string");
    assert.deepEqual(grammar.fileTypes, ["rpc"]);
    assert.ok(Array.isArray(grammar.patterns) && grammar.patterns.length > 0);
    for (const key of [
      "separator",
      "file-variable",
      "option",
      "assertion",
      "capture",
      "response-path",
      "assertion-value",
      "comment",
      "variable",
      "request",
      "header",
      "body",
    ]) {
      assert.ok(grammar.repository[key], key);
    }
  });

  test("every regex compiles in JavaScript and avoids Oniguruma-only syntax", () => {
    let count = 0;
    for (const { rule, where } of allRules()) {
      for (const key of ["match", "begin", "end"] as const) {
        const source = rule[key];
        if (source === undefined) continue;
        count++;
        assert.doesNotThrow(() => new RegExp(source), `${where}.${key}: ${source}`);
        assert.doesNotMatch(
          source,
          /\\[GhHAzZ]|\(\?[imx]|\\p\{|\(\?~/,
          `${where}.${key} uses Oniguruma-only syntax`,
        );
      }
    }
    assert.ok(count >= 10, `only ${count} regexes`);
  });

  test("every include resolves; the body embeds JSON", () => {
    for (const { rule, where } of allRules()) {
      if (!rule.include) continue;
      if (rule.include.startsWith("#"))
        assert.ok(grammar.repository[rule.include.slice(1)], `${where}: ${rule.include}`);
      else assert.equal(rule.include, "source.json", where);
    }
    assert.ok(grammar.repository.body.patterns?.some((p) => p.include === "source.json"));
    assert.ok(grammar.repository.body.name?.startsWith("meta.embedded.block.json"));
    // Variables inside JSON strings are highlighted through an injection into the embedded body.
    const injection = Object.entries(grammar.injections ?? {}).find(([selector]) =>
      selector.includes("meta.embedded.block.json"),
    );
    assert.ok(injection);
    assert.deepEqual(injection[1].patterns, [{ include: "#variable" }]);
  });

  test("separators and names", () => {
    const m = regex("separator").exec("### Greet a person");
    assert.deepEqual([m?.[1], m?.[2]], ["###", "Greet a person"]);
    assert.equal(grammar.repository.separator.captures?.["2"].name, "entity.name.section.rpc");
  });

  test("comments, request options and file variables", () => {
    assert.ok(regex("comment").test("# a comment"));
    assert.ok(regex("comment").test("  // a comment"));
    const o = regex("option").exec("# @timeout 5s");
    assert.deepEqual([o?.[1], o?.[3], o?.[4]], ["#", "timeout", "5s"]);
    const b = regex("option").exec("// @insecure");
    assert.deepEqual([b?.[1], b?.[3], b?.[4]], ["//", "insecure", undefined]);
    const e = regex("option").exec("# @reflect=false");
    assert.deepEqual([e?.[3], e?.[4]], ["reflect", "false"]);
    const v = regex("file-variable").exec("@token = {{$dotenv API_TOKEN}}");
    assert.deepEqual([v?.[2], v?.[4]], ["token", "{{$dotenv API_TOKEN}}"]);
    assert.equal(grammar.repository.option.captures?.["3"].name, "keyword.other.option.rpc");
  });

  test("@assert lines: path, operator and value get their own scopes, before the generic option rule", () => {
    const a = regex("assertion");
    const parts = (line: string) => a.exec(line)?.slice(3, 7);
    assert.deepEqual(parts('# @assert messages[0].greeting == "Hello, world"'), [
      "assert",
      "messages[0].greeting",
      "==",
      '"Hello, world"',
    ]);
    assert.deepEqual(parts('// @assert headers["content type"] contains grpc'), [
      "assert",
      'headers["content type"]',
      "contains",
      "grpc",
    ]);
    assert.deepEqual(parts("# @assert error !exists"), ["assert", "error", "!exists", undefined]);
    assert.deepEqual(parts("# @assert message.t !matches /^a\\/b[/]c$/i"), [
      "assert",
      "message.t",
      "!matches",
      "/^a\\/b[/]c$/i",
    ]);
    assert.equal(a.test("# @timeout 5s"), false);
    const top = grammar.patterns.map((p) => p.include);
    assert.ok(top.indexOf("#assertion") < top.indexOf("#option"));
    assert.ok(top.indexOf("#capture") < top.indexOf("#option"));
    const inRequest = (grammar.repository.request.patterns ?? []).map((p) => p.include);
    assert.ok(inRequest.indexOf("#assertion") < inRequest.indexOf("#option"));
    const captures = grammar.repository.assertion.captures ?? {};
    assert.equal(captures["3"].name, "keyword.other.option.rpc keyword.control.assert.rpc");
    assert.equal(captures["4"].patterns?.[0].include, "#response-path");
    assert.equal(captures["5"].name, "keyword.operator.comparison.rpc");
    assert.equal(captures["6"].patterns?.[0].include, "#assertion-value");
  });

  test("@capture lines: the variable and the path", () => {
    const c = regex("capture").exec("# @capture token = messages[-1].token");
    assert.deepEqual(c?.slice(3, 7), ["capture", "token", "=", "messages[-1].token"]);
    assert.equal(grammar.repository.capture.captures?.["4"].name, "variable.other.definition.rpc");
  });

  test("paths and values: roots, indexes, detail types, quoted names; regexes, JSON, bare words", () => {
    // As a TextMate tokenizer goes: from each position, the earliest match of the rule's patterns
    // (the first pattern on a tie) takes its text.
    const scopesOf = (rule: string, text: string) => {
      const found: [string, string][] = [];
      let pos = 0;
      while (pos < text.length) {
        let best: { index: number; end: number; name: string } | undefined;
        for (const p of grammar.repository[rule].patterns ?? []) {
          if (!p.match || !p.name) continue;
          const re = new RegExp(p.match, "g");
          re.lastIndex = pos;
          const m = re.exec(text);
          if (m && m[0].length > 0 && (!best || m.index < best.index)) {
            best = { index: m.index, end: m.index + m[0].length, name: p.name };
          }
        }
        if (!best) break;
        found.push([best.name, text.slice(best.index, best.end)]);
        pos = best.end;
      }
      return found.filter(([name]) => !name.startsWith("punctuation"));
    };
    assert.deepEqual(
      scopesOf("response-path", 'error.details[google.rpc.BadRequest].fieldViolations[*]["a b"]'),
      [
        ["variable.language.path-root.rpc", "error"],
        ["variable.other.property.rpc", "details"],
        ["entity.name.type.detail.rpc", "google.rpc.BadRequest"],
        ["variable.other.property.rpc", "fieldViolations"],
        ["constant.numeric.index.rpc", "*"],
        ["string.quoted.double.rpc", '"a b"'],
      ],
    );
    assert.deepEqual(scopesOf("assertion-value", "/^he(l+)o$/i"), [["string.regexp.rpc", "/^he(l+)o$/i"]]);
    assert.deepEqual(scopesOf("assertion-value", '["a", 1.5, true, null]'), [
      ["string.quoted.double.rpc", '"a"'],
      ["constant.numeric.rpc", "1.5"],
      ["constant.language.rpc", "true"],
      ["constant.language.rpc", "null"],
    ]);
    assert.deepEqual(scopesOf("assertion-value", "COLOR_RED"), [["constant.other.enum.rpc", "COLOR_RED"]]);
    assert.deepEqual(scopesOf("assertion-value", "string"), [["support.type.json-type.rpc", "string"]]);
    assert.equal(grammar.repository["assertion-value"].patterns?.[0].include, "#variable");
  });

  test("request lines: optional verb and URL; requests end at the next separator", () => {
    const begin = regex("request", "begin");
    const a = begin.exec("GRPC-WEB {{host}}/demo.v1.GreetService/Greet");
    assert.deepEqual([a?.[1], a?.[2]], ["GRPC-WEB", "{{host}}/demo.v1.GreetService/Greet"]);
    const b = begin.exec("http://localhost:8080");
    assert.deepEqual([b?.[1], b?.[2]], [undefined, "http://localhost:8080"]);
    assert.equal(begin.test("# @protocol grpc"), false);
    assert.ok(regex("request", "end").test("### next"));
    assert.equal(grammar.repository.request.beginCaptures?.["1"].name, "keyword.control.verb.rpc");
  });

  test("headers: name and value; the body starts at the first empty line", () => {
    const h = regex("header").exec("Authorization: Bearer {{token}}");
    assert.deepEqual([h?.[1], h?.[3]], ["Authorization", "Bearer {{token}}"]);
    assert.equal(regex("header").test('  "name": "world"'), false);
    assert.ok(regex("body", "begin").test(""));
    assert.ok(regex("body", "end").test("###"));
  });

  test("{{variables}} and system variables", () => {
    const [system, plain] = grammar.repository.variable.patterns ?? [];
    const s = new RegExp(system.match as string).exec('"{{$randomInt 1 10}}"');
    assert.deepEqual([s?.[2], s?.[3]], ["$randomInt", " 1 10"]);
    const p = new RegExp(plain.match as string).exec("{{ host }}/x");
    assert.equal(p?.[2], "host");
  });
});

describe("language-configuration.json", () => {
  test("line comments, brackets, auto-closing pairs and folding markers", () => {
    assert.equal(config.comments.lineComment, "#");
    assert.deepEqual(config.brackets, [
      ["{", "}"],
      ["[", "]"],
    ]);
    assert.ok(config.autoClosingPairs.some((p: { open: string }) => p.open === "{"));
    assert.ok(config.autoClosingPairs.some((p: { open: string }) => p.open === '"'));
    const start = new RegExp(config.folding.markers.start);
    const end = new RegExp(config.folding.markers.end);
    assert.ok(start.test("# region Greetings"));
    assert.ok(end.test("# endregion"));
    assert.doesNotThrow(() => new RegExp(config.wordPattern));
  });

  test("the file icon is an SVG", () => {
    const svg = readFileSync(join(repoRoot, "media/rpc-file.svg"), "utf8");
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]* viewBox="0 0 16 16">/);
    assert.match(svg, /<\/svg>\n$/);
  });
});
