// Parity with `buf curl`: three protocols × four streaming shapes, over HTTP/1.1, h2c and TLS, with the
// schema from reflection and from --schema. Inspect shows which HTTP version and headers each tool used.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type DemoServer,
  type DemoServers,
  examplesDir,
  startDemoServer,
  startDemoServers,
  startTlsDemoServer,
} from "../support/servers";
import { createTestPki, type TestPki } from "../support/tls";
import { assertParity } from "./harness";

const shapes = [
  { name: "unary", path: "demo.v1.GreetService/Greet", data: '{"name": "Ada"}' },
  { name: "server stream", path: "demo.v1.DemoService/Count", data: '{"count": 3, "text": "x"}' },
  {
    name: "client stream",
    path: "demo.v1.DemoService/Sum",
    data: '{"number": 1} {"number": "2"}\n{"number":39}',
  },
  { name: "bidi stream", path: "demo.v1.DemoService/Chat", data: '{"text": "a"}{"text": "b"}' },
  {
    name: "unary Inspect",
    path: "demo.v1.DemoService/Inspect",
    data: JSON.stringify({
      headerNames: [
        "te",
        "connect-protocol-version",
        "connect-content-encoding",
        "grpc-timeout",
        "content-type",
        "accept-encoding",
        "x-grpc-web",
        "content-length",
      ],
    }),
  },
];
const protocols = ["connect", "grpc", "grpcweb"];

describe("parity: protocols × streaming shapes × transports", { concurrency: 4, timeout: 300_000 }, () => {
  let servers: DemoServers;
  let tls: DemoServer;
  let tlsHttp1: DemoServer;
  let mtls: DemoServer;
  let pki: TestPki;
  before(async () => {
    pki = await createTestPki();
    [servers, tls, tlsHttp1, mtls] = await Promise.all([
      startDemoServers(),
      startTlsDemoServer(pki),
      startTlsDemoServer(pki, { http: "1.1", reflection: false }),
      startTlsDemoServer(pki, { requestClientCert: true }),
    ]);
  });
  after(async () => {
    await Promise.all([servers?.close(), tls?.close(), tlsHttp1?.close(), mtls?.close()]);
  });

  // `shapes` limits a transport to some of the shapes (by name) to keep the suite's run time down.
  const transports: { name: string; url: () => string; args: () => string[]; shapes?: string[] }[] = [
    { name: "http, reflection", url: () => servers.plain.url, args: () => [] },
    {
      name: "http, reflection, --http2-prior-knowledge",
      url: () => servers.plain.url,
      args: () => ["--http2-prior-knowledge"],
      shapes: ["unary", "server stream", "unary Inspect"],
    },
    { name: "http, --schema dir", url: () => servers.plain.url, args: () => ["--schema", examplesDir] },
    {
      name: "HTTP/1.1-only server, --schema dir",
      url: () => servers.http1.url,
      args: () => ["--schema", examplesDir],
    },
    { name: "https, reflection, --cacert", url: () => tls.url, args: () => ["--cacert", pki.ca.certPath] },
    {
      name: "https, --http2-prior-knowledge, -k",
      url: () => tls.url,
      args: () => ["--http2-prior-knowledge", "-k", "--schema", examplesDir],
    },
    {
      name: "https HTTP/1.1 only, --schema dir",
      url: () => tlsHttp1.url,
      args: () => ["--cacert", pki.ca.certPath, "--schema", examplesDir],
    },
    {
      name: "https mutual TLS, reflection",
      url: () => mtls.url,
      args: () => ["--cacert", pki.ca.certPath, "--cert", pki.client.certPath, "--key", pki.client.keyPath],
      shapes: ["unary", "bidi stream", "unary Inspect"],
    },
  ];

  for (const transport of transports) {
    for (const protocol of protocols) {
      for (const shape of shapes) {
        if (transport.shapes && !transport.shapes.includes(shape.name)) continue;
        test(`${transport.name}: ${protocol} ${shape.name}`, async () => {
          await assertParity(
            [
              ...transport.args(),
              "--protocol",
              protocol,
              "-d",
              shape.data,
              `${transport.url()}/${shape.path}`,
            ],
            // Failures here are transport failures (HTTP/1.1 cannot carry gRPC or bidi streams) whose
            // messages come from different network stacks.
            { errors: "code" },
          );
        });
      }
    }
  }

  test("a path prefix in the URL is kept", async () => {
    const prefixed = await startDemoServer({ pathPrefix: "/api/v2" });
    try {
      await assertParity(["-d", '{"headerNames": ["te"]}', `${prefixed.url}/demo.v1.DemoService/Inspect`], {
        code: 0,
      });
      await assertParity(["--list-services", prefixed.url], { code: 0 });
    } finally {
      await prefixed.close();
    }
  });

  test("--unix-socket dials the socket for reflection and the call", async () => {
    const socketPath = join(mkdtempSync(join(tmpdir(), "protocall-parity-sock-")), "demo.sock");
    const onSocket = await startDemoServer({ unixSocket: socketPath });
    try {
      for (const protocol of protocols) {
        await assertParity(
          [
            "--unix-socket",
            socketPath,
            "--protocol",
            protocol,
            "-d",
            '{"count": 2}',
            "http://demo.local/demo.v1.DemoService/Count",
          ],
          { code: 0 },
        );
      }
      await assertParity(
        [
          "--unix-socket",
          socketPath,
          "-d",
          '{"headerNames": ["host"]}',
          "http://demo.local:8080/demo.v1.DemoService/Inspect",
        ],
        {
          code: 0,
        },
      );
    } finally {
      await onSocket.close();
    }
  });

  test("mutual TLS without a client certificate fails the same way", async () => {
    await assertParity(["--cacert", pki.ca.certPath, "-d", "{}", `${mtls.url}/demo.v1.GreetService/Greet`], {
      errors: "code",
    });
  });

  test("an untrusted server certificate fails the same way", async () => {
    await assertParity(
      ["--cacert", pki.otherCa.certPath, "-d", "{}", `${tls.url}/demo.v1.GreetService/Greet`],
      {
        errors: "code",
      },
    );
  });

  test("a Host header is the default TLS server name", async () => {
    const call = `${tls.url}/demo.v1.DemoService/Inspect`;
    await assertParity(
      ["--cacert", pki.ca.certPath, "-H", "Host: localhost", "-d", '{"headerNames": ["host"]}', call],
      {
        code: 0,
      },
    );
    await assertParity(["--cacert", pki.ca.certPath, "-H", "Host: wrong.example", "-d", "{}", call], {
      errors: "code",
    });
  });

  test("--servername selects the name verified", async () => {
    const url = tls.url.replace("127.0.0.1", "localhost");
    await assertParity(
      ["--cacert", pki.ca.certPath, "--servername", "localhost", `${tls.url}/demo.v1.GreetService/Greet`],
      {
        code: 0,
      },
    );
    await assertParity(
      ["--cacert", pki.ca.certPath, "--servername", "wrong.example", `${url}/demo.v1.GreetService/Greet`],
      {
        errors: "code",
      },
    );
  });
});
