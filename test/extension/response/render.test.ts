import assert from "node:assert/strict";
import { test } from "node:test";
import type { CheckResult } from "../../../src/core/assertions/evaluate";
import type { CallResult } from "../../../src/core/invoke/call-session";
import {
  checksTitle,
  escapeHtml,
  highlightJson,
  MAX_SHOWN_MESSAGES,
  type ResponseEntry,
  renderChecks,
  renderEntry,
  renderMessage,
  responseDocument,
  statusText,
} from "../../../src/extension/response/render";

const hostile = `<img src=x onerror=alert(1)>`;

function entry(more: Partial<ResponseEntry> = {}, result?: Partial<CallResult>): ResponseEntry {
  const r: CallResult | undefined = result
    ? {
        ok: true,
        code: "ok",
        exitCode: 0,
        durationMs: 12.3,
        headers: [],
        messages: [],
        trailers: [],
        warnings: [],
        ...result,
      }
    : undefined;
  return {
    id: 1,
    requestLabel: "Greet",
    url: "http://127.0.0.1:8080/demo.v1.GreetService/Greet",
    protocol: "connect",
    startedAt: Date.UTC(2026, 0, 1),
    state: r ? "done" : "running",
    headers: [],
    messages: [],
    result: r,
    ...more,
  };
}

test("server text is escaped everywhere: header names and values, messages, error message and details, trailers, labels", () => {
  const html = renderEntry(
    entry(
      {
        requestLabel: hostile,
        url: `http://h/${hostile}`,
        method: hostile,
        headers: [[hostile, hostile]],
        messages: [`{"a": "${hostile}"}`],
      },
      {
        ok: false,
        code: "not_found",
        exitCode: 40,
        trailers: [["x-trailer", hostile]],
        error: {
          message: hostile,
          details: [
            { type: hostile, value: "AAAA", json: `{"reason": "${hostile}"}` },
            { type: "x.Unknown", value: hostile },
          ],
          text: "",
        },
      },
    ),
    { index: 0, count: 1 },
  );
  assert.ok(!html.includes("<img"), html);
  // label, URL, method, header name and value, message, error message, detail type, JSON and bytes, trailer
  assert.equal(html.split("&lt;img src=x onerror=alert(1)&gt;").length - 1, 11);
});

test("escapeHtml and highlightJson: tokens in spans, quotes and ampersands escaped", () => {
  assert.equal(escapeHtml(`a<b>&"c'`), "a&lt;b&gt;&amp;&quot;c&#39;");
  assert.equal(
    highlightJson('{\n  "k": "v<", "n": -1.5e3, "b": true, "z": null\n}'),
    '{\n  <span class="k">&quot;k&quot;</span>: <span class="s">&quot;v&lt;&quot;</span>, <span class="k">&quot;n&quot;</span>: <span class="n">-1.5e3</span>, <span class="k">&quot;b&quot;</span>: <span class="l">true</span>, <span class="k">&quot;z&quot;</span>: <span class="l">null</span>\n}',
  );
  assert.match(renderMessage('{"a": 1}', 2), /^<section class="message" data-index="2"><h3>Message 3<\/h3>/);
});

test("status line: code name, exit code and duration; history position and buttons", () => {
  assert.equal(statusText(entry({}, { durationMs: 3.25 })), "ok · exit 0 · 3.3 ms");
  assert.equal(
    statusText(entry({}, { ok: false, code: "not_found", exitCode: 40, durationMs: 1234 })),
    "not_found · exit 40 · 1234 ms",
  );
  assert.equal(
    statusText(entry({}, { ok: false, code: undefined, exitCode: 1, durationMs: 20_000 })),
    "error · exit 1 · 20.0 s",
  );
  assert.equal(statusText(entry()), "Sending…");
  assert.equal(statusText(entry({ state: "not-sent", problems: ["x"] })), "Not sent");
  const html = renderEntry(entry({}, {}), { index: 1, count: 3 });
  assert.match(html, /<span class="position">2 \/ 3<\/span>/);
  for (const action of ["older", "newer", "copy", "save", "open"])
    assert.ok(html.includes(`data-action="${action}"`));
  assert.ok(!html.includes('data-action="cancel"'));
  assert.ok(renderEntry(entry(), { index: 0, count: 1 }).includes('data-action="cancel"'));
});

test("long streams: the panel shows the first messages and says how to see the rest", () => {
  const messages = Array.from({ length: MAX_SHOWN_MESSAGES + 5 }, (_, i) => `{"n": ${i}}`);
  const html = renderEntry(entry({ messages }, {}), { index: 0, count: 1 });
  assert.equal(html.split('<section class="message"').length - 1, MAX_SHOWN_MESSAGES);
  assert.match(html, /5 more messages/);
});

test("the response as one document: a message, an array of messages, the error JSON, problems, a listing", () => {
  assert.deepEqual(responseDocument(entry({ messages: ['{\n  "a": 1\n}'] }, {})), {
    text: '{\n  "a": 1\n}\n',
    language: "json",
  });
  const two = responseDocument(entry({ messages: ['{\n  "a": 1\n}', '{\n  "a": 2\n}'] }, {}));
  assert.deepEqual(JSON.parse(two.text), [{ a: 1 }, { a: 2 }]);
  const err = responseDocument(
    entry(
      {},
      {
        ok: false,
        code: "not_found",
        exitCode: 40,
        error: { message: "m", details: [], text: '{\n   "code": "not_found"\n}\n' },
      },
    ),
  );
  assert.deepEqual(JSON.parse(err.text), { code: "not_found" });
  assert.deepEqual(responseDocument(entry({ state: "not-sent", problems: ["a.rpc:1:1: x"] })), {
    text: "a.rpc:1:1: x\n",
    language: "plaintext",
  });
  assert.equal(responseDocument(entry({}, { listing: ["a.B", "c.D"] })).text, "a.B\nc.D\n");
});

test("checks: the implicit status check is shown as such, not counted as an assertion", () => {
  const at = { start: { line: 3, character: 0 }, end: { line: 3, character: 5 } };
  const status = (passed: boolean): CheckResult => ({
    kind: "status",
    text: "status == ok",
    range: at,
    passed,
    found: true,
    actual: passed ? "ok" : "not_found",
    message: passed ? "status == ok" : "expected status == ok, got not_found",
  });
  const assertion = (passed: boolean): CheckResult => ({
    kind: "assert",
    text: 'message.greeting == "Hi"',
    range: at,
    passed,
    found: true,
    actual: "Hi",
    message: passed ? 'message.greeting == "Hi"' : 'expected message.greeting == "Hi", got "Ho"',
  });
  // A request without any # @assert: no "Assertions: all 1 passed".
  const alone = renderChecks([status(true)]);
  assert.match(alone, /<h3>Implicit check status == ok passed<\/h3>/);
  assert.doesNotMatch(alone, /Assertions/);
  assert.match(
    alone,
    /status == ok<\/code> <span class="implicit">\(implicit: no # @assert on status or error\)/,
  );
  assert.equal(checksTitle([status(false)]), "Implicit check status == ok failed");
  // Written checks are counted; the implicit one is not, but its failure is said.
  assert.equal(checksTitle([status(true), assertion(true)]), "Assertions: all 1 passed");
  assert.equal(checksTitle([status(true), assertion(false), assertion(true)]), "Assertions: 1 of 2 failed");
  assert.equal(
    checksTitle([status(false), assertion(true)]),
    "Assertions: all 1 passed; implicit check status == ok failed",
  );
  assert.match(renderChecks([status(false), assertion(true)]), /<section class="checks failed">/);
  // A call that failed outside the RPC: nothing was checked.
  const notRun: CheckResult = {
    ...assertion(false),
    found: false,
    notRun: true,
    message: "not checked: the call failed: refused",
  };
  const html = renderChecks([notRun]);
  assert.match(html, /<h3>Checks not run \(1\): the call failed<\/h3>/);
  assert.match(html, /class="check not-run"[^>]*><span class="mark">–<\/span>/);
});

test("a file upload: the panel shows its progress line, escaped; other requests show none", () => {
  const upload = { sent: 1024, total: 4096, line: "1.0 KiB / 4.0 KiB  25%  <b>" };
  const html = renderEntry(entry({ upload }), { index: 0, count: 1 });
  assert.match(html, /<p class="upload">Uploaded 1\.0 KiB \/ 4\.0 KiB {2}25% {2}&lt;b&gt;<\/p>/);
  assert.doesNotMatch(renderEntry(entry(), { index: 0, count: 1 }), /class="upload"/);
});
