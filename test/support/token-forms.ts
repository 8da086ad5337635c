// The token forms a registry client reads, as one table shared by the test that runs the real buf
// against each (token-buf.test.ts: what buf sends) and the tests that run Protocall's consumers
// (what Protocall sends), plus a registry stand-in on https that records the Authorization header
// of every request and refuses it as unauthenticated.
//
// `REMOTE` in a value stands for the registry's `localhost:PORT`. `token` is the token Protocall
// sends (undefined: no Authorization header); `buf` is what buf 1.75 sends where it differs.
import { mkdtempSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestPki } from "./tls";

export interface TokenForm {
  readonly name: string;
  readonly env: Record<string, string>;
  /** The text of ~/.netrc, or of the file NETRC names when env has NETRC: "FILE". */
  readonly netrc?: string;
  readonly token?: string;
  /** What buf sends when it is not `token` (null: nothing); absent for forms buf does not read. */
  readonly buf?: string | null;
  /** Protocall refuses the value with this message (buf: "invalid token"). */
  readonly error?: RegExp;
  /** A form of Protocall's own (PROTOCALL_TOKEN): buf is not asked. */
  readonly ours?: boolean;
}

export const tokenForms: readonly TokenForm[] = [
  { name: "BUF_TOKEN, one token for every remote", env: { BUF_TOKEN: "tok" }, token: "tok" },
  {
    name: "BUF_TOKEN list: this remote's entry",
    env: { BUF_TOKEN: "t1@other.example.com,t2@REMOTE" },
    token: "t2",
  },
  {
    name: "BUF_TOKEN list without this remote: no token",
    env: { BUF_TOKEN: "t1@a.example.com,t2@b.example.com" },
  },
  { name: "BUF_TOKEN of one entry for another remote: no token", env: { BUF_TOKEN: "tok@x.example.com" } },
  {
    name: "BUF_TOKEN list entries are taken as written (no trimming)",
    env: { BUF_TOKEN: "t1@a.example.com, t2@REMOTE" },
    token: " t2",
  },
  {
    name: "BUF_TOKEN list without this remote, then the netrc",
    env: { BUF_TOKEN: "t1@a.example.com" },
    netrc: "machine REMOTE login u password from-netrc\n",
    token: "from-netrc",
  },
  {
    name: "BUF_TOKEN before the netrc",
    env: { BUF_TOKEN: "env-token" },
    netrc: "machine REMOTE login u password from-netrc\n",
    token: "env-token",
  },
  {
    name: "an empty BUF_TOKEN counts as unset",
    env: { BUF_TOKEN: "" },
    netrc: "machine REMOTE login u password from-netrc\n",
    token: "from-netrc",
  },
  {
    name: "netrc: the machine entry of the remote, port included",
    env: {},
    netrc:
      "machine other.example.com login u password other\nmachine REMOTE\n  login u\n  password from-netrc\n",
    token: "from-netrc",
  },
  {
    name: "netrc: the default entry",
    env: {},
    netrc: "default login u password from-default\n",
    token: "from-default",
  },
  {
    name: "netrc: the machine entry before the default entry",
    env: {},
    netrc: "default login u password from-default\nmachine REMOTE login u password from-machine\n",
    token: "from-machine",
  },
  {
    name: "netrc: the first of two entries for the remote",
    env: {},
    netrc: "machine REMOTE login u password first\nmachine REMOTE login u password second\n",
    token: "first",
  },
  {
    name: "netrc: the host without the port is another machine",
    env: {},
    netrc: "machine localhost login u password bare\n",
  },
  {
    name: "NETRC names the netrc file",
    env: { NETRC: "FILE" },
    netrc: "machine REMOTE login u password from-file\n",
    token: "from-file",
  },
  {
    name: "a remote in another case is the same host (buf compares exactly)",
    env: { BUF_TOKEN: "t1@LOCALHOST:PORT" },
    token: "t1",
    buf: null,
  },
  {
    name: "a netrc machine in another case is the same host (buf compares exactly)",
    env: {},
    netrc: "machine LOCALHOST:PORT login u password upper\n",
    token: "upper",
    buf: null,
  },
  {
    name: "a BUF_TOKEN entry without a token is refused",
    env: { BUF_TOKEN: "@REMOTE" },
    error: /BUF_TOKEN is not valid: the entry "@localhost:\d+" needs a token and a remote/,
  },
  {
    name: "a BUF_TOKEN naming a remote twice is refused",
    env: { BUF_TOKEN: "a@REMOTE,b@REMOTE" },
    error: /BUF_TOKEN is not valid: it names the remote localhost:\d+ twice/,
  },
  {
    name: "PROTOCALL_TOKEN, one token",
    env: { PROTOCALL_TOKEN: "pt", BUF_TOKEN: "bt" },
    token: "pt",
    ours: true,
  },
  {
    name: "PROTOCALL_TOKEN list without this remote, then BUF_TOKEN",
    env: { PROTOCALL_TOKEN: "pt@a.example.com", BUF_TOKEN: "t1@b.example.com,t2@REMOTE" },
    token: "t2",
    ours: true,
  },
];

/** The environment and netrc of a form for the registry at `remote`, in a new HOME. */
export function formSetup(form: TokenForm, remote: string): { home: string; env: Record<string, string> } {
  const port = remote.slice(remote.lastIndexOf(":") + 1);
  const fill = (text: string) => text.replaceAll("REMOTE", remote).replaceAll("PORT", port);
  const home = mkdtempSync(join(tmpdir(), "protocall-token-form-"));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(form.env)) env[k] = fill(v);
  if (form.netrc !== undefined) {
    const file = env.NETRC === "FILE" ? join(home, "other-netrc") : join(home, ".netrc");
    if (env.NETRC === "FILE") env.NETRC = file;
    writeFileSync(file, fill(form.netrc));
  }
  return { home, env };
}

export interface RecordingRegistry {
  /** `localhost:PORT` */
  readonly remote: string;
  readonly url: string;
  /** The Authorization header of each request since the last take ("" for none). */
  take(): string[];
  close(): Promise<void>;
}

/** An https server for localhost (the PKI's server certificate) that records and refuses every call. */
export async function startRecordingRegistry(pki: TestPki): Promise<RecordingRegistry> {
  let seen: string[] = [];
  const server = http2.createSecureServer(
    { cert: pki.server.cert, key: pki.server.key, allowHTTP1: true },
    (req, res) => {
      seen.push(String(req.headers.authorization ?? ""));
      req.resume();
      req.on("end", () => {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: "unauthenticated", message: "recorded" }));
      });
    },
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    remote: `localhost:${port}`,
    url: `https://localhost:${port}`,
    take() {
      const out = seen;
      seen = [];
      return out;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export interface TrustForm {
  readonly name: string;
  /** The environment, with CA_FILE, OTHER_CA_FILE and CA_DIR standing for the test PKI's files. */
  readonly env: Record<string, string>;
  /** Whether Protocall trusts the registry's certificate. */
  readonly trusted: boolean;
  /** Whether buf trusts it, where it differs. */
  readonly buf?: boolean;
}

export const trustForms: readonly TrustForm[] = [
  { name: "SSL_CERT_FILE names the CA", env: { SSL_CERT_FILE: "CA_FILE" }, trusted: true },
  { name: "SSL_CERT_DIR holds the CA", env: { SSL_CERT_DIR: "CA_DIR" }, trusted: true },
  {
    name: "SSL_CERT_FILE replaces the system's roots",
    env: { SSL_CERT_FILE: "OTHER_CA_FILE" },
    trusted: false,
  },
  { name: "the system's roots alone", env: {}, trusted: false },
  {
    name: "NODE_EXTRA_CA_CERTS adds the CA (Node's variable: buf, a Go program, ignores it)",
    env: { NODE_EXTRA_CA_CERTS: "CA_FILE" },
    trusted: true,
    buf: false,
  },
];

/** A form's environment for the PKI (a directory holding only its CA for CA_DIR). */
export function trustEnv(form: TrustForm, pki: TestPki): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), "protocall-ca-dir-"));
  writeFileSync(join(dir, "ca.pem"), pki.ca.cert);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(form.env)) {
    out[k] =
      v === "CA_FILE"
        ? pki.ca.certPath
        : v === "OTHER_CA_FILE"
          ? pki.otherCa.certPath
          : v === "CA_DIR"
            ? dir
            : v;
  }
  return out;
}
