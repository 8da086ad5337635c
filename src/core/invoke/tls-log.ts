// The TLS lines of verbose output (`* TLS connection using …`, the server certificate), worded and
// formatted as buf prints them (Go's certificate names and dates).
import type * as tls from "node:tls";
import type { VerboseLog } from "./verbose";

export function logTls(log: VerboseLog, socket: tls.TLSSocket, insecure: boolean, verifyName: string): void {
  const cipher = socket.getCipher();
  const version = (socket.getProtocol() ?? "TLS").replace(/^TLSv/, "TLS ");
  log.info(`TLS connection using ${version} / ${cipher?.standardName ?? cipher?.name ?? "?"}`);
  log.info(
    socket.alpnProtocol
      ? `ALPN: server accepted ${socket.alpnProtocol}`
      : "ALPN: server did not agree to a protocol",
  );
  const peer = socket.getPeerCertificate();
  if (peer && Object.keys(peer).length > 0) {
    log.info("Server certificate:");
    log.info(`  subject: ${formatName(peer.subject)}`);
    log.info(`  start date: ${formatCertDate(peer.valid_from)}`);
    log.info(`  end date: ${formatCertDate(peer.valid_to)}`);
    log.info(`  subjectAltNames: [${altNames(peer.subjectaltname).all.join(", ")}]`);
    log.info(`  issuer: ${formatName(peer.issuer)}`);
  }
  if (insecure) {
    log.info("Server certificate not verified (--insecure)");
  } else {
    log.info("Server certificate chain verified");
    log.info(`Server certificate is valid for ${verifyName}`);
  }
}

/** A certificate name as Go prints it: relative names in reverse order, comma-separated. */
function formatName(name: tls.PeerCertificate["subject"] | undefined): string {
  if (!name) return "";
  return Object.entries(name)
    .reverse()
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("+") : v}`)
    .join(",");
}

/** `Nov 21 10:52:40 2026 GMT` → `2026-11-21 10:52:40 +0000 UTC`. */
function formatCertDate(text: string): string {
  const d = new Date(text);
  if (Number.isNaN(d.getTime())) return text;
  return `${d.toISOString().slice(0, 19).replace("T", " ")} +0000 UTC`;
}

/** The DNS names and IP addresses of a `subjectaltname` string (`DNS:a, IP Address:1.2.3.4`). */
export function altNames(text: string | undefined): { dns: string[]; ips: string[]; all: string[] } {
  const dns: string[] = [];
  const ips: string[] = [];
  for (const part of (text ?? "").split(/,\s*/)) {
    if (part.startsWith("DNS:")) dns.push(part.slice(4));
    else if (part.startsWith("IP Address:")) ips.push(part.slice(11));
  }
  return { dns, ips, all: [...dns, ...ips] };
}
