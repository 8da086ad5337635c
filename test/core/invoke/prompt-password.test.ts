import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { promptPassword } from "../../../src/core/invoke/prompt-password";

const repo = resolve(__dirname, "../../..");
const dir = mkdtempSync(join(tmpdir(), "protocall-pty-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// Runs a program on a real pseudo-terminal (util-linux `script`), types `keys` once the prompt shows.
function onTerminal(keys: string): Promise<string> {
  const program = join(dir, "prompt.mjs");
  writeFileSync(
    program,
    `import { promptPassword } from ${JSON.stringify(join(repo, "src/core/invoke/prompt-password.ts"))};
promptPassword("Password: ", process.stdin, process.stdout).then(
  (p) => { process.stdout.write("RESULT=" + Buffer.from(p).toString("hex") + "\\n"); process.exit(0); },
  (e) => { process.stdout.write("ERROR=" + e.message + "\\n"); process.exit(0); },
);
`,
  );
  const command = `${process.execPath} --import tsx ${program}`;
  const child = spawn("script", ["-q", "-e", "-c", command, "/dev/null"], {
    cwd: repo,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  let typed = false;
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`no answer from the terminal program; output so far: ${JSON.stringify(output)}`));
    }, 15_000);
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
      if (!typed && output.includes("Password: ")) {
        typed = true;
        child.stdin.write(keys);
      }
    });
    child.on("close", () => {
      clearTimeout(timer);
      ok(output);
    });
  });
}

describe("promptPassword", () => {
  it("reads a password on a real terminal without echoing it", async () => {
    const out = await onTerminal("s3cr\u007fet\r");
    const hex = /RESULT=([0-9a-f]*)/.exec(out)?.[1];
    assert.equal(Buffer.from(hex ?? "", "hex").toString(), "s3cet", out);
    assert.ok(!out.includes("s3c"), `the password was echoed: ${JSON.stringify(out)}`);
  });

  it("cancels on Ctrl-C", async () => {
    const out = await onTerminal("abc\u0003");
    assert.match(out, /ERROR=password prompt canceled/);
  });

  it("refuses a stdin that is not a terminal", async () => {
    await assert.rejects(
      promptPassword("Password: ", Readable.from([]), process.stderr),
      (e: unknown) => e instanceof ProtocallError && /standard input is not a terminal/.test(e.message),
    );
  });
});
