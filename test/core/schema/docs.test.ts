import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { clone, createFileRegistry, type FileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { code, escapeMarkdown, normalizeComment, renderDocs } from "../../../src/core/schema/docs";
import { lookup } from "../../../src/core/schema/lookup";
import { buildSchemaFixtures, schemaFixturesRegistry } from "../../support/schema-fixtures";

let registry: FileRegistry;
before(async () => {
  registry = await schemaFixturesRegistry();
});

function docsOf(name: string) {
  const found = lookup(registry, name);
  assert.ok(found, name);
  return renderDocs(found, { registry });
}

/** Reverses escapeMarkdown: backslash escapes and the entities it writes. */
function readBack(text: string): string {
  return text
    .replace(/\\(.)/g, "$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&nbsp;/g, " ")
    .replace(/&amp;/g, "&");
}

/** The comment part of a hover: without the title line, fenced blocks and the location line. */
function commentPart(markdown: string): string {
  return markdown
    .replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, "")
    .split("\n")
    .slice(1)
    .filter((line) => !line.startsWith("*Declared in*"))
    .join("\n");
}

describe("renderDocs", () => {
  test("a method: streaming kind, input and output types, declaration, comments, location", () => {
    const docs = docsOf("fixtures.v1.Greeter.Chat");
    assert.equal(docs.title, "bidi streaming method fixtures.v1.Greeter.Chat");
    assert.equal(
      docs.declaration,
      "rpc Chat(stream fixtures.v1.GreetRequest) returns (stream fixtures.v1.GreetResponse)",
    );
    const first = docs.markdown.split("\n")[0];
    assert.match(first, /^\*\*bidi streaming method\*\* `fixtures\.v1\.Greeter\.Chat`/);
    assert.ok(
      first.includes("`stream fixtures.v1.GreetRequest` → `stream fixtures.v1.GreetResponse`"),
      first,
    );
    assert.ok(first.includes("deprecated"));
    assert.ok(docs.markdown.includes("Chat talks both ways\\."));
    assert.ok(docs.markdown.includes("```proto\ndeprecated = true\n```"));
    assert.match(docs.markdown, /\*Declared in\* `fixtures\/v1\/greeter\.proto` line \d+\n$/);

    assert.equal(docsOf("fixtures.v1.Greeter.Greet").title, "unary method fixtures.v1.Greeter.Greet");
    assert.equal(
      docsOf("fixtures.v1.Greeter.ListGreetings").title,
      "server streaming method fixtures.v1.Greeter.ListGreetings",
    );
    assert.equal(
      docsOf("fixtures.v1.Greeter.Collect").declaration,
      "rpc Collect(stream fixtures.v1.GreetRequest) returns (fixtures.v1.GreetResponse)",
    );
    assert.ok(docsOf("fixtures.v1.Greeter.Greet").markdown.includes("idempotency_level = NO_SIDE_EFFECTS"));
  });

  test("without source info: no comments and no line, the rest unchanged", async () => {
    const { set } = await buildSchemaFixtures();
    const stripped = clone(FileDescriptorSetSchema, set);
    for (const file of stripped.file) file.sourceCodeInfo = undefined;
    const bare = createFileRegistry(stripped);
    const docs = renderDocs(lookup(bare, "fixtures.options.AnnotatedService.Do")!, { registry: bare });
    assert.equal(docs.title, "unary method fixtures.options.AnnotatedService.Do");
    assert.deepEqual(docs.comments, []);
    assert.equal(docs.options.length, 3);
    assert.match(docs.markdown, /\*Declared in\* `fixtures\/options\/annotated\.proto`\n$/);
  });

  test("the location is shown one-based", () => {
    const found = lookup(registry, "fixtures.v1.Greeter")!;
    assert.ok(renderDocs(found).markdown.includes(`line ${found.location!.startLine + 1}\n`));
  });

  test("a field: number, type, label, JSON name, default and oneof membership", () => {
    const display = docsOf("fixtures.v1.GreetRequest.display_name");
    assert.equal(display.declaration, 'string display_name = 9 [json_name = "shownAs"]');
    const line = display.markdown.split("\n")[0];
    for (const part of ["number 9", "type `string`", "JSON `shownAs`"]) assert.ok(line.includes(part), part);

    const count = docsOf("fixtures.proto2.Legacy.count").markdown.split("\n")[0];
    for (const part of ["number 2", "type `int32`", "optional", "default `42`"])
      assert.ok(count.includes(part), part);
    assert.ok(docsOf("fixtures.proto2.Legacy.label").markdown.includes('default `"none"`'));
    assert.ok(docsOf("fixtures.proto2.Legacy.blob").markdown.includes('default `"\\001\\002"`'));
    assert.ok(docsOf("fixtures.proto2.Legacy.color").markdown.includes("default `GREEN`"));
    assert.ok(docsOf("fixtures.proto2.Legacy.score").markdown.includes("default `-inf`"));
    assert.ok(docsOf("fixtures.proto2.Legacy.id").markdown.split("\n")[0].includes("required"));
    assert.ok(docsOf("fixtures.editions.Settings.id").markdown.split("\n")[0].includes("required"));

    const email = docsOf("fixtures.v1.GreetRequest.email").markdown.split("\n")[0];
    assert.ok(email.includes("in oneof `address`"), email);
    assert.ok(docsOf("fixtures.v1.GreetRequest.numbers").markdown.includes("type `repeated int32`"));
    assert.ok(
      docsOf("fixtures.v1.GreetRequest.postals").markdown.includes(
        "type `map<int64, fixtures.v1.GreetRequest.Postal>`",
      ),
    );
    assert.ok(docsOf("fixtures.proto2.priority").markdown.includes("extends `fixtures.proto2.Legacy`"));
  });

  test("comments in source order with normalized indentation", () => {
    const docs = docsOf("fixtures.v1.LANGUAGE_EN");
    assert.deepEqual(docs.comments, [
      "Detached comment inside an enum.",
      "English.",
      "Trailing comment on a value.",
    ]);
    const service = docsOf("fixtures.v1.Greeter");
    assert.deepEqual(service.comments, [
      "A detached comment about the service, separated by a blank line.",
      "Greeter greets people.\nIt has one method of every streaming kind.",
      "Trailing comment of the service block.",
    ]);
    // Line breaks inside a comment are kept as hard breaks.
    assert.ok(
      service.markdown.includes("Greeter greets people\\.  \nIt has one method of every streaming kind\\."),
    );
    assert.equal(normalizeComment("\n   a\n     b\n\n   c  \n\n"), "a\n  b\n\nc");
  });

  test("custom options are listed, message-typed ones included", () => {
    const docs = docsOf("fixtures.options.AnnotatedService.Do");
    assert.ok(
      docs.markdown.includes(
        'Options:\n\n```proto\nidempotency_level = IDEMPOTENT\n(fixtures.options.method_rule) = { name: "do", severity: SEVERITY_LOW, limit: { max: -1 } }\n(fixtures.options.method_timeout_ms) = 1500\n```',
      ),
      docs.markdown,
    );
    assert.equal(docs.options.length, 3);
  });

  test("text from the schema cannot inject HTML, links or images", () => {
    for (const name of ["fixtures.v1.Hostile", "fixtures.v1.Hostile.text"]) {
      const docs = docsOf(name);
      const text = commentPart(docs.markdown);
      assert.ok(text.includes("javascript") || text.includes("html"), text);
      assert.doesNotMatch(text, /</, "no raw HTML");
      assert.doesNotMatch(text, /(^|[^\\])[[\]]/m, "no unescaped brackets (links, images)");
      assert.doesNotMatch(text, /(^|[^\\])[`*_!]/m, "no unescaped emphasis, code or image marks");
      assert.ok(!docs.markdown.includes("<img"));
      assert.ok(!docs.markdown.includes("](javascript"));
    }
    const hostile = docsOf("fixtures.v1.Hostile");
    // The comment is still all there once the escapes are read back.
    assert.ok(
      readBack(hostile.markdown).includes(
        "Hostile <img src=x onerror=alert(1)> and [x](javascript:alert(1)) in a comment.",
      ),
    );
    assert.ok(readBack(docsOf("fixtures.v1.Hostile.text").markdown).includes("trailing <i>html</i>"));
  });

  test("escapeMarkdown and code keep any text literal", () => {
    const nasty = "a *b* _c_ `d` [e](f) <g> & \\ # + - . ! | ~ {h}";
    assert.equal(readBack(escapeMarkdown(nasty)), nasty);
    assert.equal(code("a`b"), "``a`b``");
    assert.equal(code("`x"), "`` `x ``");
  });
});
