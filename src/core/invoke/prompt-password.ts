// Reads a password from a terminal without echoing it, for `--user name` without a password.
import { ProtocallError } from "../errors";

interface TtyInput extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  isRaw?: boolean;
}

/**
 * Writes `prompt` to `out`, then reads one line from the terminal `input` in raw mode (nothing is
 * echoed). Enter ends the line, Backspace deletes, Ctrl-C and Ctrl-D cancel.
 */
export function promptPassword(
  prompt: string,
  input: NodeJS.ReadableStream,
  out: NodeJS.WritableStream,
): Promise<string> {
  const tty = input as TtyInput;
  if (!tty.isTTY || typeof tty.setRawMode !== "function") {
    return Promise.reject(
      new ProtocallError(
        "cannot prompt for the --user password: standard input is not a terminal; give the password as --user name:password or use --netrc",
      ),
    );
  }
  const setRawMode = tty.setRawMode.bind(tty);
  const wasRaw = tty.isRaw === true;
  // Raw mode first: anything typed after the prompt appears must not be echoed.
  setRawMode(true);
  out.write(prompt);
  return new Promise<string>((resolve, reject) => {
    let password = "";
    const finish = (err?: Error) => {
      input.removeListener("data", onData);
      setRawMode(wasRaw);
      input.pause();
      out.write("\n");
      if (err) reject(err);
      else resolve(password);
    };
    const onData = (chunk: Buffer | string) => {
      const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
      for (const ch of text) {
        switch (ch) {
          case "\r":
          case "\n":
            finish();
            return;
          case "\u0003":
          case "\u0004":
            finish(new ProtocallError("password prompt canceled"));
            return;
          case "\u007f":
          case "\b":
            password = Array.from(password).slice(0, -1).join("");
            break;
          default:
            password += ch;
        }
      }
    };
    input.on("data", onData);
    input.resume();
  });
}
