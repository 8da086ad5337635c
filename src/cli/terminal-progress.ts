// A `--stream-file` upload's progress line on the terminal (stderr, only when it is a TTY): the core's
// meter (core/invoke/stream-progress.ts) drawn in place with a carriage return and erase-line, and
// erased before anything else is written to the terminal and when the call ends, so responses and
// errors never share its line. Not a terminal (a pipe, a CI log): nothing is drawn.
import type { Writable } from "node:stream";
import { createProgressMeter, type StreamProgress } from "../core/invoke/stream-progress";

export interface TerminalProgress {
  /** Feeds a progress report (absent when stderr is not a terminal). */
  readonly update?: (p: StreamProgress) => void;
  /** Erases the line if one is drawn (before other output, and at the end). */
  clear(): void;
}

export function terminalProgress(stderr: Writable, wanted: boolean): TerminalProgress {
  if (!wanted || (stderr as { isTTY?: boolean }).isTTY !== true) return { clear() {} };
  let shown = false;
  const draw = (line: string) => {
    stderr.write(`\r\x1b[K${line}`);
    shown = true;
  };
  let meter = createProgressMeter({ draw });
  return {
    // Each upload starts at 0 (protocall run sends several): its own clock for the rate.
    update(p) {
      if (p.sent === 0) meter = createProgressMeter({ draw });
      meter(p);
    },
    clear() {
      if (!shown) return;
      stderr.write("\r\x1b[K");
      shown = false;
    },
  };
}
