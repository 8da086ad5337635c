// Generated .rpc texts for the property tests: random mixes of valid fragments and junk.

/** A small deterministic PRNG (mulberry32), so a failure can be replayed from its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const fragments = [
  "###",
  "### Greet",
  "###   spaced name  ",
  "# comment",
  "// comment",
  "# @protocol grpc",
  "# @protocol",
  "// @timeout 5s",
  "# @timeout {{t}}",
  "# @insecure",
  "# @insecure nope",
  "# @name Named",
  "# @unknown-flag x",
  "# @",
  "# @assert status == ok",
  '# @assert messages[0].greeting == "Hello"',
  "# @assert messages[*].n >= {{min}}",
  '# @assert headers["content-type"] contains grpc',
  "# @assert error.details[google.rpc.BadRequest].fieldViolations[-1].field exists",
  "# @assert message.text matches /^a[/]b\\/c/i",
  "# @assert message.x isType strin",
  "# @assert headers.content-type",
  '# @assert message["unclosed',
  "# @assert message[ == x",
  "# @assert",
  "# @capture token = message.token",
  "# @capture = message",
  "# @capture t message.x",
  "?? status == 200",
  "@host = http://localhost:8080",
  "@token = {{$dotenv TOKEN}}",
  "@ = x",
  "@bad",
  "{{host}}/demo.v1.GreetService/Greet",
  "GRPC http://127.0.0.1:1/a.B/C",
  "GRPC-WEB {{host}}/x.Y/Z",
  "CONNECT",
  "POST http://x",
  "http://h/s.S/M HTTP/1.1",
  "Authorization: Bearer {{token}}",
  "x-request-id: {{$uuid}}",
  "content-type: x",
  ": no name",
  "no colon",
  "",
  "",
  "",
  '{"name": "world"}',
  '{"a": [1, {"b": "}]"}',
  "]}",
  '"unterminated',
  '"str" 12 true null',
  "< ./file.json",
  "<",
  "< ",
  "{{",
  "}}",
  "{{$randomInt 1 5}}",
  "\\",
  '"\\"',
  "\ufeff",
  "😀é\u2028\u0000",
  "\t  \t",
];
const junk = '#/@:{}[]"\\<>=$ \t\r\n\u2028😀aZ09.-_';

export function generate(next: () => number): string {
  const parts: string[] = [];
  const count = Math.floor(next() * 14);
  for (let i = 0; i < count; i++) {
    const r = next();
    if (r < 0.7) parts.push(fragments[Math.floor(next() * fragments.length)]);
    else {
      let s = "";
      const n = Math.floor(next() * 12);
      for (let j = 0; j < n; j++) s += junk[Math.floor(next() * junk.length)];
      parts.push(s);
    }
  }
  const seps = ["\n", "\r\n", "\r", "", " "];
  let text = "";
  for (const p of parts) text += p + seps[next() < 0.85 ? 0 : Math.floor(next() * seps.length)];
  return text;
}
