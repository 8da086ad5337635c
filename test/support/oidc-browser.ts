// A person signing in through the browser, for the authorization code and device code tests: follows
// the provider's redirects with a cookie jar, submits oidc-provider's own pages as they are filled
// (the device code confirmation, then the devInteractions sign-in and consent) and ends at the
// redirect URI or the device flow's "success" page, as a browser would. Run as a program (`node --import tsx oidc-browser.ts URL`), it is the
// $BROWSER the CLI opens.
import { user } from "./oidc-provider";

/** Signs in at `start` (the authorization URL); resolves with the final redirect's status. */
export async function signInWithBrowser(start: string, login = user.username): Promise<number> {
  const cookies = new Map<string, string>();
  let url = new URL(start);
  let init: RequestInit = {};
  for (let step = 0; step < 20; step++) {
    const headers = new Headers(init.headers);
    if (cookies.size > 0) headers.set("cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair.indexOf("=");
      cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
    }
    init = {};
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      await res.arrayBuffer();
      url = new URL(location, url);
      continue;
    }
    const html = await res.text();
    const form = /<form[^>]*action="([^"]+)"/.exec(html);
    if (!form) return res.status;
    // Every input of the form as the page filled it (hidden fields, a prefilled user code), then the
    // person's login.
    const body = new URLSearchParams();
    for (const input of html.matchAll(/<input\b[^>]*>/g)) {
      const name = /\bname="([^"]+)"/.exec(input[0])?.[1];
      if (name) body.set(name, /\bvalue="([^"]*)"/.exec(input[0])?.[1] ?? "");
    }
    const prompt = body.get("prompt") ?? "";
    if (prompt === "login") {
      body.set("login", login);
      body.set("password", "any");
    }
    url = new URL(form[1].replaceAll("&amp;", "&"), url);
    init = { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } };
  }
  throw new Error("sign-in did not finish in 20 steps");
}

if (process.argv[1]?.endsWith("oidc-browser.ts") && process.argv[2]) {
  signInWithBrowser(process.argv[2]).then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${err}\n`);
      process.exit(1);
    },
  );
}
