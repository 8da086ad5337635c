import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot, runProcess } from "../support/cli";

test("npm start --once: serves the demo and runs each example command as expected", {
  timeout: 90_000,
}, async () => {
  const r = await runProcess(
    process.execPath,
    [join(repoRoot, "scripts/demo.mjs"), "--once", "--port", "0", "--no-build"],
    {
      timeoutMs: 80_000,
    },
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const url = r.stdout.match(/listening at (http:\/\/127\.0\.0\.1:\d+)/)?.[1];
  assert.ok(url, r.stdout);
  assert.ok(
    r.stdout.includes(`$ protocall curl --list-services ${url}\ndemo.v1.DemoService\ndemo.v1.GreetService\n`),
  );
  assert.match(r.stdout, /"greeting": "Hello, world!"/);
  assert.equal(r.stdout.match(/"text": "tick"\n/g)?.length, 3);
  assert.match(r.stdout, /"sum": "42"/);
  assert.match(r.stdout, /"code": "not_found"[\s\S]*\(exit code 40\)/);
  assert.match(r.stdout, /--schema examples [\s\S]*"greeting": "Hello, schema!"/);
  assert.equal(r.stdout.match(/\(exit code 0\)/g)?.length, 5);
});
