// What chat shows while an editor tool runs: the server called, the file run, the element described.
import assert from "node:assert/strict";
import { test } from "node:test";
import { invocationMessage } from "../../../src/extension/agent-tools/invocation-message";

test("each tool's message names what it reaches", () => {
  assert.equal(invocationMessage("list_services", {}), "Listing the workspace's services");
  assert.equal(
    invocationMessage("list_services", { server: "http://127.0.0.1:8080" }),
    "Listing the services of http://127.0.0.1:8080",
  );
  assert.equal(
    invocationMessage("describe", { name: "demo.v1.GreetRequest" }),
    "Describing demo.v1.GreetRequest",
  );
  assert.equal(
    invocationMessage("call_method", { url: "http://h:1/demo.v1.GreetService/Greet" }),
    "Calling http://h:1/demo.v1.GreetService/Greet",
  );
  assert.equal(invocationMessage("run_file", { file: "a.rpc", name: "Greet" }), "Running a.rpc (Greet)");
  assert.equal(invocationMessage("check_files", {}), "Checking request files");
});

test("arguments of the wrong shape still give a message", () => {
  assert.equal(invocationMessage("call_method", { url: 42 }), "Calling a method");
  assert.equal(invocationMessage("run_file", null), "Running a request file");
  assert.equal(invocationMessage("describe", "x"), "Describing a Protobuf element");
});
