// Which headers belong to the protocol (content type, encodings, hop-by-hop, grpc-* and connect-*,
// CORS) and which are the application's: the mock relays and records only the application's, and a
// proxied call exported as a stub writes only those, so both agree on what a stub's headers are.
const protocolHeader =
  /^(content-(type|length|encoding)|accept-encoding|te|host|connection|keep-alive|transfer-encoding|upgrade|user-agent|date|vary|trailer|grpc-.*|connect-.*|access-control-.*|:.*)$/i;

/** Whether a header is the protocol's own (not the application's). */
export function isProtocolHeader(name: string): boolean {
  return protocolHeader.test(name);
}

/** The headers of `from` that are not the protocol's own. */
export function passedHeaders(from: Headers): Headers {
  const out = new Headers();
  from.forEach((value, name) => {
    if (!protocolHeader.test(name)) out.append(name, value);
  });
  return out;
}
