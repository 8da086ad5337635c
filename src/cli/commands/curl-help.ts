// The text of `protocall curl --help`: what the command does, examples, and every flag.

interface HelpFlag {
  name: string;
  short?: string;
  kind: string;
  help: string;
  defaultText?: string;
  global?: boolean;
}

const intro = `Invoke an RPC method over Connect, gRPC or gRPC-Web, like 'buf curl' (same flags, same output).

The only positional argument is the URL of the method: a base URL followed by the fully-qualified
service name and the method name, such as http://localhost:8080/acme.v1.GreetService/Greet.
The scheme is http or https. Over http, HTTP/1.1 is used unless --http2-prior-knowledge is set; the
grpc protocol and server reflection need HTTP/2, so they imply it. Over https, HTTP/2 is preferred
and HTTP/1.1 is used only if the server lacks HTTP/2.

The schema comes from server reflection (the default) or from --schema. Reflection is called at the
base URL + /grpc.reflection.v1.ServerReflection/ServerReflectionInfo (or v1alpha).
--schema takes a directory, a .proto file, a descriptor-set file, - (stdin), or a module of a schema
registry, REMOTE/owner/module[:ref] (buf.example.com/acme/weather:v1). A module is fetched as buf
fetches it (token from PROTOCALL_TOKEN, BUF_TOKEN or ~/.netrc; trust from the system, SSL_CERT_FILE
and --cacert; bounded by --timeout), verified, compiled and cached by commit in the user's cache
directory, so later calls only ask the registry which commit the reference names.

Request data (-d) is JSON: one document for unary and server-streaming methods, any number for
client- and bidi-streaming methods (whitespace between documents is needed only between scalars).
Without -d, unary and server-streaming methods send one empty message.

Headers (-H) are "name: value". If headers and data come from the same file (or both from stdin),
the file holds the headers, then a blank line, then the data (LF or CRLF line endings).

Exit codes: an RPC error prints the error as JSON on stderr and exits with the gRPC code times 8
(for example 40 for not_found, 112 for unavailable). Any other failure prints one line on stderr and
exits with 1.

Differences from 'buf curl', on purpose: header values are never split at commas; server reflection
also works with servers whose descriptors are imperfect (such as @grpc/reflection); HTTP/2 prior
knowledge is implied for grpc and reflection over plain http; --netrc fails when the file has no
entry for the host; header/data files may use CRLF line endings; --http3 is refused, since Node.js
has no QUIC support; --proxy names a proxy on the command line (buf reads HTTPS_PROXY, HTTP_PROXY
and NO_PROXY only, as protocall does without it), and h2c tunnels through the proxy; --auth gets
the bearer token from an OAuth2 / OpenID provider, which buf cannot.`;

const examples = `Examples:

Call a unary method on a server with reflection, using an empty request:

    $ protocall curl http://localhost:8080/acme.v1.GreetService/Greet

Call a method with request data, using the schema of the .proto files in a directory:

    $ protocall curl --schema ./proto --data '{"name": "Ada"}' \\
         http://localhost:8080/acme.v1.GreetService/Greet

Use a descriptor set as the schema, over gRPC:

    $ protocall curl --schema image.binpb --protocol grpc \\
         http://localhost:8080/acme.v1.GreetService/Greet

Stream requests to a client-streaming method from a file of JSON documents:

    $ protocall curl --data @requests.json \\
         http://localhost:8080/acme.v1.GreetService/GreetMany

Send headers, and read headers and requests from stdin (headers, a blank line, then the data):

    $ protocall curl -H 'Authorization: Bearer $TOKEN' -H 'x-request-id: 42' \\
         http://localhost:8080/acme.v1.GreetService/Greet
    $ protocall curl -H @- -d @- --protocol grpcweb \\
         https://api.example.com/acme.v1.ChatService/Chat <<EOM
    x-request-id: 42

    {"text": "hello"}
    {"text": "bye"}
    EOM

Verify the server with a private certificate authority, and present a client certificate:

    $ protocall curl --cacert ca.pem --cert client.pem --key client-key.pem \\
         https://localhost:8443/acme.v1.GreetService/Greet

Send credentials from ~/.netrc (a line such as "machine localhost:8443 login ada password s3cret"):

    $ protocall curl --netrc https://localhost:8443/acme.v1.GreetService/Greet

List the services and methods a server offers:

    $ protocall curl --list-services http://localhost:8080
    $ protocall curl --list-methods --schema ./proto`;

function flagLines(flags: HelpFlag[]): string[] {
  const left = flags.map((f) => {
    const short = f.short ? `-${f.short}, ` : "    ";
    const type = f.kind === "bool" ? "" : ` ${f.kind}`;
    return `  ${short}--${f.name}${type}`;
  });
  const width = Math.max(...left.map((l) => l.length)) + 3;
  const lines: string[] = [];
  flags.forEach((f, i) => {
    const text = f.defaultText ? `${f.help} (default ${f.defaultText})` : f.help;
    const wrapped = wrap(text, 100 - width);
    lines.push(left[i].padEnd(width) + wrapped[0]);
    for (const more of wrapped.slice(1)) lines.push(" ".repeat(width) + more);
  });
  return lines;
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  out.push(line);
  return out;
}

/** Renders the help for the given flag table. */
export function renderCurlHelp(flags: readonly HelpFlag[]): string {
  return [
    intro,
    "",
    examples,
    "",
    "Usage:",
    "  protocall curl <url> [flags]",
    "",
    "Flags:",
    ...flagLines(flags.filter((f) => !f.global)),
    "",
    "Global Flags:",
    ...flagLines(flags.filter((f) => f.global)),
    "",
  ].join("\n");
}
