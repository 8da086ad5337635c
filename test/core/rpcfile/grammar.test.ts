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
