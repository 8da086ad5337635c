import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { splitCommands } from "../../../src/core/rpcfile/shell-words";

const words = (text: string) =>
  splitCommands(text).map((c) => c.map((i) => ("word" in i ? i.word : `${i.redirect}${i.file}`)));

describe("splitCommands", () => {
  test("quotes, escapes and continuations as sh reads them", () => {
    assert.deepEqual(
      words(`buf curl -H 'a: "x"' -d "{\\"n\\": 1, \\\\ \\$x}" \\\n  --data=a\\ b http://h/s.S/M`),
      [["buf", "curl", "-H", 'a: "x"', "-d", '{"n": 1, \\ $x}', "--data=a b", "http://h/s.S/M"]],
    );
    assert.deepEqual(words("a 'it'\\''s' x\"y\"z"), [["a", "it's", "xyz"]]);
    assert.deepEqual(words("a $'line\\nnext\\t\\'q\\''"), [["a", "line\nnext\t'q'"]]);
    assert.deepEqual(words('a "multi\nline" b'), [["a", "multi\nline", "b"]]);
    assert.deepEqual(words("a ''"), [["a", ""]]);
  });

  test("commands end at newlines, ; && and ||; comments are skipped", () => {
    assert.deepEqual(words("a 1\n\n# a comment\nb 2; c && d || e # tail\n"), [
      ["a", "1"],
      ["b", "2"],
      ["c"],
      ["d"],
      ["e"],
    ]);
    assert.deepEqual(words("a#b"), [["a#b"]]);
  });

  test("redirections are kept apart", () => {
    assert.deepEqual(words("grpcurl -d @ h:1 s.S/M < body.json > 'out dir/r.json'"), [
      ["grpcurl", "-d", "@", "h:1", "s.S/M", "<body.json", ">out dir/r.json"],
    ]);
    assert.deepEqual(words("a <in"), [["a", "<in"]]);
  });

  test("environment variables become {{$env NAME}}, except in single quotes", () => {
    assert.deepEqual(words(`a "Bearer $TOKEN" \${HOST}/x '$LIT' $ cost$`), [
      ["a", "Bearer {{$env TOKEN}}", "{{$env HOST}}/x", "$LIT", "$", "cost$"],
    ]);
  });

  test("what a request cannot express is refused with a clear message", () => {
    const refused: [string, RegExp][] = [
      ["a 'open", /single quote \('\) is not closed/],
      ['a "open', /double quote \("\) is not closed/],
      ["a $(cat token)", /command substitution/],
      ["a `cat token`", /command substitution/],
      [`a $${"{"}X:-y}`, /shell expansion \$\{X:-y\}/],
      ["echo {} | buf curl", /pipe \(\|\)/],
      ["a &", /background job/],
      ["a <", /names no file/],
    ];
    for (const [text, message] of refused) assert.throws(() => splitCommands(text), message, text);
  });
});
