import assert from "node:assert/strict";
import { test } from "node:test";
import { inertText } from "../../../src/core/webhooks/inert-text";

test("link syntax from a server is broken apart; other text is unchanged", () => {
  assert.equal(
    inertText("denied [click here](command:workbench.action.terminal.new) now"),
    "denied [click here] (command:workbench.action.terminal.new) now",
  );
  assert.equal(inertText("[a]  (https://x.example)"), "[a] (https://x.example)");
  assert.equal(inertText("<img src=x onerror=alert(1)>"), "<img src=x onerror=alert(1)>");
  assert.equal(inertText("f(x) [y]"), "f(x) [y]");
});
