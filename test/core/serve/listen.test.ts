// Starting a server: a free port by default, a port in use as a rejected promise (not an unhandled
// "error" event), and the address as a base URL.
import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";
import { baseUrlOf, listenOn } from "../../../src/core/serve/listen";

test("listens on a free port of 127.0.0.1 and refuses a port in use", async () => {
  const first = net.createServer();
  const second = net.createServer();
  try {
    const address = await listenOn(first);
    assert.equal(address.address, "127.0.0.1");
    assert.ok(address.port > 0);
    assert.equal(baseUrlOf(address, false), `http://127.0.0.1:${address.port}`);
    await assert.rejects(listenOn(second, address.port), { code: "EADDRINUSE" });
    assert.equal(second.listenerCount("error"), 0, "the error listener is removed");
  } finally {
    first.close();
    second.close();
  }
});

test("an IPv6 address is bracketed in the URL", () => {
  assert.equal(baseUrlOf({ address: "::1", family: "IPv6", port: 8443 }, true), "https://[::1]:8443");
});
