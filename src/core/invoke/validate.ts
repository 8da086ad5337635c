// Checks a `protocall curl` options object before anything is read or sent: every combination
// `buf curl` refuses, plus what Node cannot do (HTTP/3). Each failure is a ProtocallError whose
// message says what is wrong and how to fix it.
import { ProtocallError } from "../errors";
import { parseHeaderLine } from "../header-line";
import type { CurlOptions } from "./options";
import { isListMode, parseCurlUrl, usesReflection } from "./url";

export interface CurlValidation {
  /** Notes for verbose output: flags that are accepted but have no effect, implied settings. */
  warnings: string[];
}

function fail(message: string): never {
  throw new ProtocallError(message);
}

/** Throws ProtocallError on the first problem found; returns notes for verbose output otherwise. */
export function validateCurlOptions(o: CurlOptions): CurlValidation {
  const warnings: string[] = [];
  if (o.listServices && o.listMethods) {
    fail("--list-services and --list-methods cannot be used together: give one of them");
  }
  const reflect = usesReflection(o);
  if (!reflect && o.schemas.length === 0) {
    fail(
      "--reflect=false needs a schema: give --schema (a directory, .proto file or descriptor set), or drop --reflect=false to use server reflection",
    );
  }
  const u = parseCurlUrl(o);
  const hasUrl = u.url !== undefined;

  if (hasUrl && !u.secure && (o.key || o.cert || o.cacert || o.servername || o.insecure !== undefined)) {
    fail(
      "TLS flags (--key, --cert, --cacert, --insecure, --servername) need an https URL: use https:// or remove them",
    );
  }
  if (!!o.key !== !!o.cert) {
    fail(
      o.key
        ? "--key needs --cert: mutual TLS needs both the client certificate (--cert) and its private key (--key)"
        : "--cert needs --key: mutual TLS needs both the client certificate (--cert) and its private key (--key)",
    );
  }
  if (o.insecure && o.cacert) {
    fail(
      "--insecure and --cacert cannot be used together: --insecure skips verification, so --cacert would be unused; remove one",
    );
  }
  if (o.http3) {
    if (hasUrl && !u.secure) fail("--http3 needs an https URL: HTTP/3 runs over TLS only");
    if (o.unixSocket) fail("--http3 cannot be used with --unix-socket: HTTP/3 runs over UDP; remove one");
    fail(
      "--http3 is not supported: Node.js has no QUIC support in its stable API; remove --http3 to use HTTP/2 over TLS",
    );
  }
  if (o.netrc && o.netrcFile !== undefined) {
    fail("--netrc and --netrc-file cannot be used together: give --netrc-file PATH alone to use that file");
  }
  const schemaStdin = o.schemas.filter((s) => s === "-").length;
  if (schemaStdin > 1) {
    fail("--schema - is given more than once: stdin can hold only one schema; give the others as files");
  }
  if (!reflect && (o.reflectHeaders.length > 0 || o.reflectProtocol !== undefined)) {
    fail(
      "--reflect-header and --reflect-protocol need server reflection, which is off (--reflect=false, or --schema without --reflect): add --reflect or remove them",
    );
  }
  if (!["connect", "grpc", "grpcweb"].includes(o.protocol)) {
    fail(`invalid --protocol "${o.protocol}": it must be one of "connect", "grpc", or "grpcweb"`);
  }
  if (o.reflectProtocol !== undefined && !["grpc-v1", "grpc-v1alpha"].includes(o.reflectProtocol)) {
    fail(`invalid --reflect-protocol "${o.reflectProtocol}": it must be one of "grpc-v1" or "grpc-v1alpha"`);
  }
  if (o.noKeepalive && o.keepaliveTime !== undefined) {
    fail("--keepalive-time cannot be used with --no-keepalive: keepalive is off; remove one of them");
  }
  if (o.keepaliveTime !== undefined && !(o.keepaliveTime > 0)) {
    fail(`--keepalive-time must be a positive number of seconds, not ${o.keepaliveTime}`);
  }
  if (o.connectTimeout !== undefined && !(o.connectTimeout > 0)) {
    fail(
      `--connect-timeout must be a positive number of seconds, not ${o.connectTimeout}; omit it for no limit`,
    );
  }
  if (o.timeoutMs !== undefined && !(o.timeoutMs >= 0)) {
    fail("--timeout must not be negative: give a duration such as 5s, or 0 for no timeout");
  }

  // Inputs: -d, -H, --reflect-header.
  let dataFile: string | undefined;
  if (o.data?.startsWith("@")) {
    dataFile = o.data.slice(1);
    if (dataFile === "") {
      fail("--data @ needs a file name: write -d @path to read a file, or -d @- to read stdin");
    }
    if (dataFile === "-" && schemaStdin > 0) {
      fail("--data @- and --schema - cannot both read stdin: put the request data or the schema in a file");
    }
  }
  checkHeaderFlags("--header", o.headers, schemaStdin > 0, false);
  checkHeaderFlags("--reflect-header", o.reflectHeaders, schemaStdin > 0, true);
  if (dataFile !== undefined && o.reflectHeaders.includes(`@${dataFile}`)) {
    fail(
      dataFile === "-"
        ? "--data @- and --reflect-header @- cannot both read stdin: put the reflection headers in a file"
        : `--data and --reflect-header cannot name the same file (${dataFile}): put the reflection headers in their own file`,
    );
  }

  // Notes.
  if (hasUrl && !u.secure && !o.http2PriorKnowledge && !isListMode(o) && o.protocol === "grpc") {
    warnings.push("Using HTTP/2 prior knowledge over plain-text (h2c): the gRPC protocol needs HTTP/2");
  } else if (hasUrl && !u.secure && !o.http2PriorKnowledge && reflect) {
    warnings.push("Using HTTP/2 prior knowledge over plain-text (h2c): server reflection needs HTTP/2");
  }
  if (o.user !== undefined && (o.netrc || o.netrcFile !== undefined)) {
    warnings.push("--user is given, so netrc credentials are not used");
  }
  return { warnings };
}

function checkHeaderFlags(flag: string, values: string[], schemaStdin: boolean, star: boolean): void {
  const files = new Set<string>();
  let stars = 0;
  for (const v of values) {
    if (v === "*") {
      if (!star) {
        fail(
          `${flag} value '*' is not valid: '*' is only for --reflect-header, where it sends the --header headers with reflection requests too`,
        );
      }
      if (++stars > 1) fail(`${flag} '*' is given more than once: give it once`);
      continue;
    }
    if (v.startsWith("@")) {
      const file = v.slice(1);
      if (file === "") fail(`${flag} @ needs a file name: write ${flag} @path, or ${flag} @- for stdin`);
      if (file === "-" && schemaStdin) {
        fail(`${flag} @- and --schema - cannot both read stdin: put the headers or the schema in a file`);
      }
      if (files.has(file)) fail(`${flag} names the same file more than once (${file}): give it once`);
      files.add(file);
      continue;
    }
    if (v === "") continue; // as buf: an empty value adds nothing
    parseHeaderLine(v, `${flag} value`);
  }
}
