// The JUnit and JSON reports. The JUnit document is parsed with a real XML parser and checked against
// the rules of the Jenkins / Ant junit-4 XSD (the schema JUnit 5 checks its own reports with): which
// elements nest where, in which order and how often, which attributes each may and must have.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { evaluateChecks } from "../../../src/core/assertions/evaluate";
import { jsonReport } from "../../../src/core/assertions/json-report";
import { attribute, junitReport, text } from "../../../src/core/assertions/junit-report";
import type { CallOutcome } from "../../../src/core/assertions/outcome";
import { type RequestResult, summarize, verdictOf } from "../../../src/core/assertions/results";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";

/** The junit-4 XSD as rules: attributes allowed and required, children in sequence with counts. */
const schema: Record<
  string,
  { allowed: string[]; required: string[]; sequence?: [string, number, number][]; text?: boolean }
> = {
  testsuites: {
    allowed: ["name", "time", "tests", "failures", "disabled", "errors"],
    required: [],
    sequence: [["testsuite", 0, Infinity]],
  },
  testsuite: {
    allowed: [
      "name",
      "tests",
      "failures",
      "errors",
      "time",
      "disabled",
      "skipped",
      "timestamp",
      "hostname",
      "id",
      "package",
    ],
    required: ["name", "tests"],
    sequence: [
      ["properties", 0, 1],
      ["testcase", 0, Infinity],
      ["system-out", 0, 1],
      ["system-err", 0, 1],
    ],
  },
  testcase: {
    allowed: ["name", "assertions", "time", "classname", "status"],
    required: ["name"],
    sequence: [
      ["skipped", 0, 1],
      ["error", 0, Infinity],
      ["failure", 0, Infinity],
      ["system-out", 0, Infinity],
      ["system-err", 0, Infinity],
    ],
  },
  failure: { allowed: ["type", "message"], required: [], text: true },
  error: { allowed: ["type", "message"], required: [], text: true },
  skipped: { allowed: [], required: [], text: true },
  "system-out": { allowed: [], required: [], text: true },
  "system-err": { allowed: [], required: [], text: true },
};

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

type Ordered = Record<string, unknown> & { ":@"?: Record<string, string> };

function toElements(nodes: Ordered[]): XmlElement[] {
  const out: XmlElement[] = [];
  for (const node of nodes) {
    const name = Object.keys(node).find((k) => k !== ":@");
    if (!name || name === "#text" || name === "?xml") continue;
    const inner = node[name] as Ordered[];
    out.push({
      name,
      attributes: node[":@"] ?? {},
      children: toElements(inner),
      text: inner.map((n) => (typeof n["#text"] === "string" ? n["#text"] : "")).join(""),
    });
  }
  return out;
}

function parseXml(xml: string): XmlElement {
  assert.equal(XMLValidator.validate(xml), true, "well-formed XML");
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: "",
    parseAttributeValue: false,
    parseTagValue: false,
    trimValues: false,
    processEntities: true,
    htmlEntities: true,
  });
  const roots = toElements(parser.parse(xml) as Ordered[]);
  assert.equal(roots.length, 1, "one root element");
  return roots[0];
}

/** Checks an element and its descendants against the schema rules. */
function validate(e: XmlElement, where = e.name): void {
  const rule = schema[e.name];
  assert.ok(rule, `${where}: element <${e.name}> is not in the schema`);
  for (const a of Object.keys(e.attributes))
    assert.ok(rule.allowed.includes(a), `${where}: attribute ${a} not allowed`);
  for (const a of rule.required) assert.ok(a in e.attributes, `${where}: attribute ${a} required`);
  if (!rule.sequence) {
    assert.deepEqual(e.children, [], `${where}: <${e.name}> holds text only`);
    return;
  }
  assert.equal(e.text.trim(), "", `${where}: <${e.name}> holds no text`);
  let step = 0;
  let count = 0;
  for (const child of e.children) {
    while (step < rule.sequence.length && rule.sequence[step][0] !== child.name) {
      assert.ok(count >= rule.sequence[step][1], `${where}: too few <${rule.sequence[step][0]}>`);
      step++;
      count = 0;
    }
    assert.ok(step < rule.sequence.length, `${where}: <${child.name}> is out of order or not allowed`);
    count++;
    assert.ok(count <= rule.sequence[step][2], `${where}: too many <${child.name}>`);
    validate(child, `${where} > ${child.name}`);
  }
  for (const num of ["tests", "failures", "errors", "skipped", "assertions"]) {
    if (num in e.attributes) assert.match(e.attributes[num], /^[0-9]+$/, `${where}: ${num}`);
  }
  if ("time" in e.attributes) assert.match(e.attributes.time, /^[0-9]+\.[0-9]{3}$/, `${where}: time`);
}

/** Results of a small run: a pass, a failure with two failed checks, an error, a skip, in two files. */
function sampleResults(): RequestResult[] {
  const file = parseRpcFile(`### Greet
# @assert message.greeting == "Hello, world"
# @capture greeting = message.greeting
http://h/demo.v1.GreetService/Greet

### Fail & <escape> "quotes"
# @assert error.code == not_found
# @assert error.details[google.rpc.BadRequest] exists
# @assert message.long == "short"
http://h/demo.v1.DemoService/Fail
`);
  assert.deepEqual(file.diagnostics, []);
  const [greet, fail] = file.requests;
  const good: CallOutcome = {
    status: "ok",
    headers: [],
    trailers: [],
    messages: [{ greeting: "Hello, world" }],
    durationMs: 12.25,
  };
  const bad: CallOutcome = {
    status: "invalid_argument",
    headers: [],
    trailers: [],
    messages: [{ long: `${"x".repeat(300)}\u0001\uFFFF` }],
    error: { code: "invalid_argument", message: 'bad <name> & "x"', details: [] },
    durationMs: 4,
  };
  const refused: CallOutcome = {
    headers: [],
    trailers: [],
    messages: [],
    durationMs: 1,
    failure: "connection refused",
  };
  const e1 = evaluateChecks(good, greet);
  const e2 = evaluateChecks(bad, fail);
  const e3 = evaluateChecks(refused, greet);
  return [
    {
      file: "requests/a.rpc",
      name: "Greet",
      line: 1,
      verdict: verdictOf(good, e1),
      durationMs: 12.25,
      status: "ok",
      checks: e1.checks,
    },
    {
      file: "requests/a.rpc",
      name: 'Fail & <escape> "quotes"',
      line: 6,
      verdict: verdictOf(bad, e2),
      durationMs: 4,
      status: "invalid_argument",
      checks: e2.checks,
    },
    {
      file: "requests/b.rpc",
      name: "Greet",
      line: 1,
      verdict: verdictOf(refused, e3),
      durationMs: 1,
      checks: e3.checks,
      message: "connection refused",
    },
    {
      file: "requests/b.rpc",
      name: "Later",
      line: 9,
      verdict: "skipped",
      durationMs: 0,
      checks: [],
      message: "not run: --bail stopped the run after a failure",
    },
  ];
}

describe("results", () => {
  test("verdicts and the summary", () => {
    const results = sampleResults();
    assert.deepEqual(
      results.map((r) => r.verdict),
      ["passed", "failed", "errored", "skipped"],
    );
    assert.deepEqual(summarize(results), {
      requests: 4,
      passed: 1,
      failed: 1,
      errored: 1,
      skipped: 1,
      durationMs: 17.25,
      checks: { passed: 3, failed: 3, notRun: 3 },
    });
  });
});

describe("junitReport", () => {
  const timestamp = new Date("2026-01-02T03:04:05.678Z");

  test("is valid against the junit-4 schema rules", () => {
    const xml = junitReport(sampleResults(), { timestamp, hostname: "ci-1" });
    assert.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites /);
    assert.ok(xml.endsWith("</testsuites>\n"));
    validate(parseXml(xml));
  });

  test("counts, times and names: a suite per file, a case per request", () => {
    const root = parseXml(junitReport(sampleResults(), { timestamp, hostname: "ci-1" }));
    assert.deepEqual(root.attributes, {
      name: "protocall run",
      tests: "4",
      failures: "1",
      errors: "1",
      time: "0.017",
    });
    assert.deepEqual(
      root.children.map((s) => s.attributes),
      [
        {
          name: "requests/a.rpc",
          tests: "2",
          failures: "1",
          errors: "0",
          skipped: "0",
          time: "0.016",
          timestamp: "2026-01-02T03:04:05",
          hostname: "ci-1",
        },
        {
          name: "requests/b.rpc",
          tests: "2",
          failures: "0",
          errors: "1",
          skipped: "1",
          time: "0.001",
          timestamp: "2026-01-02T03:04:05",
          hostname: "ci-1",
        },
      ],
    );
    const cases = root.children.flatMap((s) => s.children);
    assert.deepEqual(
      cases.map((c) => [
        c.attributes.name,
        c.attributes.classname,
        c.attributes.time,
        c.attributes.assertions,
      ]),
      [
        ["Greet", "requests/a.rpc", "0.012", "3"],
        ['Fail & <escape> "quotes"', "requests/a.rpc", "0.004", "3"],
        ["Greet", "requests/b.rpc", "0.001", "3"],
        ["Later", "requests/b.rpc", "0.000", "0"],
      ],
    );
  });

  test("a failure per failed check with its location; error and skipped with their reasons", () => {
    const root = parseXml(junitReport(sampleResults(), { timestamp }));
    const [pass, fail, error, skip] = root.children.flatMap((s) => s.children);
    assert.deepEqual(
      pass.children.map((c) => c.name),
      ["system-out"],
    );
    assert.equal(
      pass.children[0].text,
      'passed: status == ok\npassed: message.greeting == "Hello, world"\npassed: captured greeting = "Hello, world"',
    );
    const failures = fail.children.filter((c) => c.name === "failure");
    assert.deepEqual(
      failures.map((f) => [f.attributes.type, f.attributes.message]),
      [
        ["assertion", 'expected error.code == not_found, got "invalid_argument"'],
        [
          "assertion",
          "expected error.details[google.rpc.BadRequest] exists, got nothing (no detail of type google.rpc.BadRequest (there are no details))",
        ],
        ["assertion", `expected message.long == "short", got "${"x".repeat(196)}...`],
      ],
    );
    assert.equal(
      failures[0].text,
      'requests/a.rpc:7:1: expected error.code == not_found, got "invalid_argument"',
    );
    // A value cut in the message is whole in the text; characters XML cannot hold are replaced.
    assert.ok(failures[2].text.includes(`actual: "${"x".repeat(300)}\\u0001\uFFFD"`), failures[2].text);
    assert.deepEqual(
      error.children.map((c) => [c.name, c.attributes, c.text]),
      [
        ["error", { message: "connection refused", type: "error" }, "requests/b.rpc:1: connection refused"],
        [
          "system-out",
          {},
          'not run: status == ok\nnot run: message.greeting == "Hello, world"\nnot run: greeting = message.greeting',
        ],
      ],
    );
    assert.deepEqual(
      skip.children.map((c) => [c.name, c.attributes, c.text]),
      [["skipped", {}, "not run: --bail stopped the run after a failure"]],
    );
  });

  test("escaping: markup characters, quotes, line breaks in attributes, and characters XML 1.0 cannot hold", () => {
    assert.equal(text('a < b & c > "d"'), 'a &lt; b &amp; c &gt; "d"');
    assert.equal(attribute("a\"b'c\nd\te\rf"), "a&quot;b&apos;c&#10;d&#9;e&#13;f");
    assert.equal(text("x\u0000y\u0008z\u001f\uFFFE\uFFFF"), "x\uFFFDy\uFFFDz\uFFFD\uFFFD\uFFFD");
    assert.equal(text("lone \uD800 high, pair 😀"), "lone \uFFFD high, pair 😀");
    const results: RequestResult[] = [
      {
        file: "a&b.rpc",
        name: "line\nbreak \u0007 ]]> <tag>",
        line: 1,
        verdict: "errored",
        durationMs: 1,
        checks: [],
        message: "multi\nline \"quoted\" 'single' \uD83D",
      },
    ];
    const root = parseXml(junitReport(results, { timestamp }));
    validate(root);
    const c = root.children[0].children[0];
    assert.equal(c.attributes.name, "line\nbreak \uFFFD ]]> <tag>");
    assert.equal(c.children[0].attributes.message, "multi\nline \"quoted\" 'single' \uFFFD");
    assert.equal(root.children[0].attributes.name, "a&b.rpc");
  });

  test("the schema check itself refuses what the XSD refuses", () => {
    const bad = [
      '<testsuites><testsuite name="a" tests="1"><testcase name="x" file="a.rpc"/></testsuite></testsuites>',
      '<testsuites><testsuite tests="1"/></testsuites>',
      '<testsuites><testsuite name="a" tests="1"><testcase name="x"><failure/><skipped/></testcase></testsuite></testsuites>',
      '<testsuites><testsuite name="a" tests="1"><testcase name="x"><skipped message="m"/></testcase></testsuite></testsuites>',
      '<testsuites><testsuite name="a" tests="x"/></testsuites>',
      '<testsuites><testcase name="x"/></testsuites>',
    ];
    for (const xml of bad) assert.throws(() => validate(parseXml(xml)), assert.AssertionError, xml);
    assert.throws(() => parseXml("<testsuites><testsuite></testsuites>"), /well-formed/);
  });

  test("an empty run is a valid document", () => {
    const root = parseXml(junitReport([], { timestamp }));
    validate(root);
    assert.deepEqual(root.attributes, {
      name: "protocall run",
      tests: "0",
      failures: "0",
      errors: "0",
      time: "0.000",
    });
  });
});

describe("jsonReport", () => {
  test("a versioned summary, then each request with its checks, locations one-based", () => {
    const report = JSON.parse(
      jsonReport(sampleResults(), { timestamp: new Date("2026-01-02T03:04:05.678Z") }),
    );
    assert.equal(report.version, 1);
    assert.equal(report.timestamp, "2026-01-02T03:04:05.678Z");
    assert.deepEqual(report.summary, summarize(sampleResults()));
    assert.deepEqual(
      report.requests.map((r: { name: string; verdict: string; status?: string; message?: string }) => [
        r.name,
        r.verdict,
        r.status,
        r.message,
      ]),
      [
        ["Greet", "passed", "ok", undefined],
        ['Fail & <escape> "quotes"', "failed", "invalid_argument", undefined],
        ["Greet", "errored", undefined, "connection refused"],
        ["Later", "skipped", undefined, "not run: --bail stopped the run after a failure"],
      ],
    );
    assert.deepEqual(report.requests[0].checks, [
      {
        kind: "status",
        text: "status == ok",
        line: 1,
        column: 1,
        passed: true,
        found: true,
        message: "status == ok",
        actual: "ok",
      },
      {
        kind: "assert",
        text: 'message.greeting == "Hello, world"',
        line: 2,
        column: 1,
        passed: true,
        found: true,
        message: 'message.greeting == "Hello, world"',
        actual: "Hello, world",
      },
      {
        kind: "capture",
        text: "greeting = message.greeting",
        line: 3,
        column: 1,
        passed: true,
        found: true,
        message: 'captured greeting = "Hello, world"',
        actual: "Hello, world",
      },
    ]);
    const missing = report.requests[1].checks[1];
    assert.equal(missing.found, false);
    assert.equal("actual" in missing, false);
    assert.ok(jsonReport([]).endsWith("}\n"));
  });
});
