// The --auth value: grants and their aliases, quoted values, defaults, and an error that says what to
// write for each mistake.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseAuthSpec } from "../../src/core/auth-spec";

const base = "issuer=https://id.example.com client-id=cli";

describe("parseAuthSpec", () => {
  test("reads the grant, the settings and quoted values; client-auth defaults from the secret", () => {
    const s = parseAuthSpec(
      `oauth2 client-credentials ${base} client-secret='a b' scope="read write" cache=./t.json`,
    );
    assert.equal(s.grant, "client_credentials");
    assert.equal(s.clientSecret, "a b");
    assert.equal(s.scope, "read write");
    assert.equal(s.clientAuth, "basic");
    assert.equal(s.cache, "./t.json");
    const device = parseAuthSpec(`OAuth2 device ${base}`);
    assert.equal(device.grant, "device_code");
    assert.equal(device.clientAuth, "none");
    const code = parseAuthSpec(`oauth2 code ${base} redirect-port=8765 client-auth=post client-secret=x`);
    assert.equal(code.grant, "authorization_code");
    assert.equal(code.redirectPort, 8765);
    assert.equal(code.clientAuth, "post");
  });

  test("each mistake is named with how to fix it", () => {
    const cases: [string, RegExp][] = [
      ["bearer x", /--auth: unknown scheme "bearer"; give "oauth2 GRANT key=value \.\.\."/],
      [
        `oauth2 implicit ${base}`,
        /unknown grant "implicit"; use one of client_credentials, refresh_token, password, device_code, authorization_code/,
      ],
      [
        `oauth2 device ${base} colour=red`,
        /unknown setting "colour"; settings are key=value with key one of issuer, token-url/,
      ],
      [`oauth2 device ${base} scope="a b`, /a " quote is not closed/],
      ["oauth2 device issuer=https://id.example.com", /client-id=\.\.\. is missing/],
      [
        "oauth2 device client-id=x token-url=https://id.example.com/token",
        /the device_code grant needs issuer=URL or device-authorization-url=URL/,
      ],
      [
        `oauth2 client_credentials ${base}`,
        /client_credentials grant needs client-secret=\.\.\. \(from a variable/,
      ],
      [`oauth2 password ${base} username=a`, /the password grant needs password=\.\.\./],
      [`oauth2 refresh_token ${base}`, /the refresh_token grant needs refresh-token=\.\.\./],
      [
        "oauth2 device client-id=x issuer=id.example.com",
        /issuer=id\.example\.com: not an http:\/\/ or https:\/\/ URL/,
      ],
      [`oauth2 code ${base} redirect-port=99999`, /redirect-port=99999: give a port number from 1 to 65535/],
      [`oauth2 code ${base} client-auth=jwt`, /client-auth=jwt: use basic, post or none/],
    ];
    for (const [text, expected] of cases) assert.throws(() => parseAuthSpec(text), expected, text);
  });
});
