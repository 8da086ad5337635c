import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { JsonValue } from "@bufbuild/protobuf";
import { withProxyOverride } from "../../../src/core/invoke/proxy-choice";
import { ensureSelfSignedCert } from "../../../src/core/serve/self-signed";
import { eventToJson, samplePushEvent } from "../../../src/core/webhooks/event";
import { closePostConnections, post } from "../../../src/core/webhooks/http-post";
import {
  checkListenerSettings,
  ListenerSession,
  type SessionChange,
} from "../../../src/core/webhooks/listener-session";
import { readStoreFile } from "../../../src/core/webhooks/store";
import { startTinyproxy } from "../../support/proxy";

/** The parts of a push event's protobuf JSON the tests read and change. */
interface PushJson {
  payload: {
    repositoryPush: {
      repository: { name: string };
      repositoryCommit: { name: string; author: string; tags: { name: string }[] };
    };
  };
}

after(() => closePostConnections());

function session(keep?: number) {
  const dir = mkdtempSync(join(tmpdir(), "protocall-session-"));
  return new ListenerSession({ storeFile: join(dir, "deliveries.store"), certDir: join(dir, "certs"), keep });
}

test("starts over https with the kept self-signed certificate; test pushes arrive, newest first", async () => {
  const s = session();
  const changes: SessionChange[] = [];
  s.onDidChange((c) => changes.push(c));
  try {
    const info = await s.start({});
    assert.match(
      info.callbackUrl,
      /^https:\/\/127\.0\.0\.1:\d+\/buf\.alpha\.webhook\.v1alpha1\.EventService\/Event$/,
    );
    assert.equal(info.url, `https://127.0.0.1:${info.port}`);
    assert.equal(info.tls, true);
    assert.ok(info.certPath && readFileSync(info.certPath, "utf8").includes("BEGIN CERTIFICATE"));
    assert.match(info.fingerprint ?? "", /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.ok(changes.includes("listener"));
    assert.equal(s.count(), 0);

    const first = await s.sendTest();
    assert.equal(first.status, 200);
    assert.equal(first.to, info.callbackUrl);
    const hostile = eventToJson(samplePushEvent()) as unknown as PushJson;
    hostile.payload.repositoryPush.repositoryCommit.author = "<img src=x onerror=alert(1)>";
    assert.equal((await s.sendTest(hostile as unknown as JsonValue)).status, 200);
    assert.equal(s.count(), 2);
    const list = s.deliveries();
    assert.deepEqual(
      list.map((d) => d.id),
      [2, 1],
    );
    assert.equal(
      (list[0].event as unknown as PushJson).payload.repositoryPush.repositoryCommit.author,
      "<img src=x onerror=alert(1)>",
    );
    assert.ok(changes.filter((c) => c === "deliveries").length >= 2);

    // The same certificate is used on the next start (a trusted fingerprint stays valid).
    await s.stop();
    assert.equal(s.running, undefined);
    const again = await s.start({});
    assert.equal(again.fingerprint, info.fingerprint);
    assert.equal(s.count(), 2, "the store survives a restart");
  } finally {
    await s.dispose();
  }
});

test("replays to the listener (a new delivery) and to any URL, with status and latency", async () => {
  const s = session();
  const got: Buffer[] = [];
  const backend = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push(Buffer.concat(chunks));
      res.writeHead(202, { "content-type": "text/plain" });
      res.end("thanks");
    });
  });
  await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
  try {
    const info = await s.start({ tls: false });
    assert.match(info.callbackUrl, /^http:\/\//);
    await s.sendTest();
    const original = s.deliveries()[0];
    const toListener = await s.replay(original.id, info.callbackUrl);
    assert.equal(toListener.status, 200);
    assert.ok(toListener.latencyMs >= 0);
    const newest = s.deliveries()[0];
    assert.notEqual(newest.id, original.id);
    assert.equal(newest.headers["x-protocall-replay-of"], String(original.id));
    assert.equal(newest.body, original.body, "replayed byte for byte");

    const port = (backend.address() as net.AddressInfo).port;
    const toBackend = await s.replay(original.id, `http://127.0.0.1:${port}/hook`);
    assert.deepEqual({ status: toBackend.status, body: toBackend.body }, { status: 202, body: "thanks" });
    assert.equal(got[0].toString("base64"), original.body);

    await assert.rejects(s.replay(999, info.callbackUrl), /no delivery #999/);
    await assert.rejects(s.replay(original.id, "ftp://x"), /not an http\(s\) URL/);
    await assert.rejects(
      s.replay(original.id, "http://127.0.0.1:1/x"),
      /cannot replay delivery #1 to http:\/\/127\.0\.0\.1:1\/x/,
    );
  } finally {
    await s.dispose();
    backend.close();
  }
});

test("forwards to forwardTo and records the answer on the delivery", async () => {
  const s = session();
  const backend = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(500);
      res.end("backend down");
    });
  });
  await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
  try {
    const port = (backend.address() as net.AddressInfo).port;
    const forwardTo = `http://127.0.0.1:${port}/events`;
    await s.start({ tls: false, forwardTo });
    const forwarded = new Promise<void>((resolve) =>
      s.onDidChange(() => {
        if (s.deliveries()[0]?.forward) resolve();
      }),
    );
    await s.sendTest();
    await forwarded;
    const f = s.deliveries()[0].forward!;
    assert.deepEqual(
      { url: f.url, status: f.status, body: f.body },
      { url: forwardTo, status: 500, body: "backend down" },
    );
  } finally {
    await s.dispose();
    backend.close();
  }
});

test("forwards go through the proxy its environment names (the editor's http.proxy)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-session-proxy-"));
  const proxy = await startTinyproxy();
  const s = new ListenerSession({
    storeFile: join(dir, "deliveries.store"),
    certDir: join(dir, "certs"),
    env: () => withProxyOverride({}, { proxy: proxy.url }),
  });
  const backend = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.end("ok"));
  });
  await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
  try {
    const authority = `0.0.0.0:${(backend.address() as net.AddressInfo).port}`;
    await s.start({ tls: false, forwardTo: `http://${authority}/events` });
    const forwarded = new Promise<void>((resolve) =>
      s.onDidChange(() => {
        if (s.deliveries()[0]?.forward) resolve();
      }),
    );
    await s.sendTest();
    await forwarded;
    assert.equal(s.deliveries()[0].forward?.status, 200);
    assert.ok(
      proxy.connects().includes(authority),
      `no CONNECT ${authority}: ${proxy.connects().join(", ")}`,
    );
  } finally {
    await s.dispose();
    backend.close();
    await proxy.stop();
  }
});

test("rejected deliveries are listed too", async () => {
  const s = session();
  try {
    const info = await s.start({ tls: false });
    const res = await post(info.callbackUrl, Buffer.from("garbage"), { "content-type": "text/plain" });
    assert.equal(res.status, 415);
    const [d] = s.deliveries();
    assert.equal(d.status, "rejected");
    assert.match(d.reason ?? "", /unsupported content type/);
  } finally {
    await s.dispose();
  }
});

test("clear empties the store while running and while stopped; load reads what earlier runs stored", async () => {
  const s = session();
  try {
    await s.start({ tls: false });
    await s.sendTest();
    await s.sendTest();
    await s.clear();
    assert.equal(s.count(), 0);
    assert.deepEqual(s.deliveries(), []);
    await s.sendTest();
    assert.equal(s.count(), 1);
    await s.stop();
    assert.equal(readStoreFile(s.storeFile).length, 1);

    const other = new ListenerSession({ storeFile: s.storeFile, certDir: join(s.storeFile, "..", "certs") });
    await other.load();
    assert.equal(other.count(), 1);
    assert.equal(other.deliveries().length, 1);
    await other.clear();
    assert.equal(other.count(), 0);
    assert.deepEqual(readStoreFile(s.storeFile), []);
  } finally {
    await s.dispose();
  }
});

test("keeps only the newest deliveries in memory, counts them all", async () => {
  const s = session(2);
  try {
    await s.start({ tls: false });
    for (let i = 0; i < 4; i++) await s.sendTest();
    assert.equal(s.count(), 4);
    assert.deepEqual(
      s.deliveries().map((d) => d.id),
      [4, 3],
    );
    assert.equal((await s.get(1))?.id, 1, "older ones are read from the store");
    assert.equal((await s.all()).length, 4);
  } finally {
    await s.dispose();
  }
});

test("settings and start errors say what to fix", async () => {
  assert.throws(() => checkListenerSettings({ port: 70000 }), /protocall\.listener\.port is 70000/);
  assert.throws(() => checkListenerSettings({ host: " " }), /protocall\.listener\.host is empty/);
  assert.throws(
    () => checkListenerSettings({ forwardTo: "localhost:3000" }),
    /forwardTo "localhost:3000" is not an http\(s\) URL/,
  );
  assert.throws(() => checkListenerSettings({ maxStoreBytes: 10 }), /at least 1048576/);
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
  const s = session();
  try {
    const port = (blocker.address() as net.AddressInfo).port;
    await assert.rejects(s.start({ port, tls: false }), /the port is in use; set protocall\.listener\.port/);
    assert.equal(s.running, undefined);
    // The store was released: a start on a free port works.
    const info = await s.start({ tls: false });
    assert.ok(info.port > 0);
    await assert.rejects(
      new ListenerSession({ storeFile: s.storeFile, certDir: tmpdir() }).sendTest(),
      /not running/,
    );
  } finally {
    await s.dispose();
    blocker.close();
  }
});

test("serves the certificate its front end gives, and trusts it for its own sends", async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-session-cert-"));
  let calls = 0;
  const s = new ListenerSession({
    storeFile: join(dir, "deliveries.store"),
    certDir: join(dir, "unused"),
    certificate: () => {
      calls++;
      return ensureSelfSignedCert(join(dir, "shared"), "listener");
    },
  });
  try {
    const info = await s.start({});
    assert.equal(info.certPath, join(dir, "shared", "listener-cert.pem"));
    assert.equal((await s.sendTest()).status, 200);
    assert.ok(calls >= 1);
    assert.equal(existsSync(join(dir, "unused")), false);
  } finally {
    await s.dispose();
  }
});

test("a store held by another process is named, with what to do", async () => {
  const s = session();
  // The parent process (running) holds the lock, as another window's listener would.
  writeFileSync(`${s.storeFile}.lock`, String(process.ppid));
  await assert.rejects(
    s.start({ tls: false }),
    new RegExp(
      `its store .*deliveries\\.store is in use by process ${process.ppid} \\(another window of this workspace, or \`protocall listen\`\\): stop the listener there first`,
    ),
  );
  assert.equal(s.running, undefined);
  await s.dispose();
});

test("a store damaged on disk: load and start keep every intact delivery and say what was skipped", async () => {
  const s = session();
  try {
    await s.start({ tls: false });
    for (let i = 0; i < 5; i++) assert.equal((await s.sendTest()).status, 200);
    await s.stop();
    // One flipped byte in the third delivery.
    const data = readFileSync(s.storeFile);
    let third = -1;
    for (let i = 0; i < 3; i++) third = data.indexOf('{"kind":"delivery"', third + 1);
    data[third + 40] ^= 0x20;
    writeFileSync(s.storeFile, data);
    await s.load();
    assert.deepEqual(
      s.deliveries().map((d) => d.id),
      [5, 4, 2, 1],
    );
    assert.match(
      s.storeWarning ?? "",
      /damaged: skipped \d+ bytes .*between deliveries 2 and 4.*lost delivery 3/,
    );
    const info = await s.start({ tls: false });
    assert.match(info.storeWarning ?? "", /lost delivery 3.*moved to .*deliveries\.store\.damaged/);
    assert.equal(s.count(), 4);
    await s.stop();
    await s.load();
    assert.equal(s.storeWarning, undefined, "repaired on start: the next read is clean");
  } finally {
    await s.dispose();
  }
});
