// Which certificate authorities a registry client trusts, as the buf CLI (a Go program) decides it,
// since Node by itself trusts only its own bundled roots and ignores SSL_CERT_FILE:
//  - SSL_CERT_FILE (a PEM bundle) and SSL_CERT_DIR (directories of PEM files, `:`-separated) replace
//    the system's roots, as in Go;
//  - otherwise the system's bundle (the first of the files Go looks for on Linux and the BSDs), and
//    where there is none (macOS, Windows) Node's bundled roots;
//  - plus an extra CA file the user names (`--cacert`, a registry's `caFile`), NODE_EXTRA_CA_CERTS,
//    and CAs the caller holds (the editor's for a registry; the certificates `protocall listen --tls`
//    and `protocall registry serve --tls` generated on this machine, each self-signed for localhost).
// Returns undefined when Node's defaults are exactly that, so the common case costs nothing.
// It is the one trust rule: registry access (access.ts) and every https call the CLI makes to its own
// servers use it.
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { rootCertificates } from "node:tls";
import { ProtocallError } from "../errors";

/** The system bundles Go reads (crypto/x509, root_linux.go and root_bsd.go), in its order. */
const systemBundles = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/ca-bundle.pem",
  "/etc/pki/tls/cacert.pem",
  "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
  "/etc/ssl/cert.pem",
  "/usr/local/etc/ssl/cert.pem",
  "/etc/openssl/certs/ca-certificates.crt",
];

export interface RegistryTrustOptions {
  readonly env: NodeJS.ProcessEnv;
  /** An extra PEM file of trusted CAs (relative to cwd). */
  readonly caFile?: string;
  /** What names caFile in messages (default `--cacert`). */
  readonly caFlag?: string;
  /** More trusted CAs in PEM (the editor's for this registry: its `caFile`, or the local registry's own). */
  readonly extraCa?: string;
  /** More trusted CAs in PEM: the certificates Protocall's own servers generated on this machine. */
  readonly extraCas?: readonly string[];
  readonly cwd?: string;
}

/** The trusted CAs in PEM, or undefined for Node's defaults. Throws ProtocallError for unreadable files. */
export function registryTrust(o: RegistryTrustOptions): string[] | undefined {
  const out: string[] = [];
  const certFile = o.env.SSL_CERT_FILE;
  const certDirs = (o.env.SSL_CERT_DIR ?? "").split(process.platform === "win32" ? ";" : ":").filter(Boolean);
  if (certFile || certDirs.length > 0) {
    if (certFile) out.push(readPem(certFile, "SSL_CERT_FILE"));
    for (const dir of certDirs) out.push(...readPemDir(dir));
  } else {
    const system = process.platform === "win32" || process.platform === "darwin" ? undefined : systemBundle();
    const extra = o.caFile || o.extraCa || o.extraCas?.length || o.env.NODE_EXTRA_CA_CERTS;
    if (system === undefined && !extra) return undefined;
    out.push(...(system === undefined ? rootCertificates : [system]));
  }
  if (o.env.NODE_EXTRA_CA_CERTS) {
    const extra = tryRead(o.env.NODE_EXTRA_CA_CERTS);
    if (extra) out.push(extra);
  }
  if (o.caFile) out.push(readPem(resolve(o.cwd ?? process.cwd(), o.caFile), o.caFlag ?? "--cacert"));
  if (o.extraCa) out.push(o.extraCa);
  if (o.extraCas) out.push(...o.extraCas);
  return uniqueCertificates(out);
}

/**
 * Each certificate once: a certificate directory holds every CA twice or more (the file and its
 * hash-named links) and repeats the bundle, and TLS parses every copy it is given.
 */
function uniqueCertificates(pems: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const pem of pems) {
    for (const m of pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)) {
      seen.add(m[0].replace(/\r/g, ""));
    }
  }
  return [...seen];
}

function systemBundle(): string | undefined {
  for (const file of systemBundles) {
    const text = tryRead(file);
    if (text) return text;
  }
  return undefined;
}

function tryRead(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function readPem(file: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ProtocallError(
      `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? err}; name a PEM file of trusted certificates`,
    );
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    throw new ProtocallError(`${what} ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  return text;
}

/** Every readable file in a certificate directory that holds a PEM certificate (Go reads them all). */
function readPemDir(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  const files = new Set<string>();
  for (const name of names) {
    // Hash-named links point at files already read.
    let file = join(dir, name);
    try {
      file = realpathSync(file);
    } catch {
      continue;
    }
    if (files.has(file)) continue;
    files.add(file);
    const text = tryRead(file);
    if (text?.includes("-----BEGIN CERTIFICATE-----")) out.push(text);
  }
  return out;
}
