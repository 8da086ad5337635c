/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Playwright helpers that drive a code-server workbench (test/support/code-server.ts) in Debian's
// Chromium: open files and views, run commands, hover, complete, click CodeLens and tree items, read
// notifications and webviews, answer input boxes and quick picks, and save screenshots as artifacts.
// Every wait polls for a condition with a generous timeout (the CI machine has 2 cores and runs
// VS Code, Chromium and the language server at once); none sleeps a fixed time to "let things settle".
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type FrameLocator, type Locator, type Page } from "playwright-core";

export const chromiumPath = process.env.PROTOCALL_CHROMIUM ?? "/usr/bin/chromium";
export const chromiumArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/** Default timeout of each wait, in ms (PROTOCALL_E2E_TIMEOUT overrides it). */
export const defaultTimeout = Number(process.env.PROTOCALL_E2E_TIMEOUT ?? 30_000);

export interface Suggestion {
  label: string;
  /** The row's whole aria-label (label, kind, detail). */
  ariaLabel: string;
}

export interface Workbench {
  page: Page;
  browser: Browser;
  /** Saves <artifactsDir>/<nn>-<name>.png (numbered in call order) and returns its path. */
  screenshot(name: string): Promise<string>;
  /** Opens a workspace file with Quick Open (Ctrl+P) and waits for its editor to be active. */
  openFile(relPath: string): Promise<void>;
  /** Runs a command by its palette title (F1), e.g. "Protocall: Send Request". */
  runCommand(title: string): Promise<void>;
  /** Waits until `text` shows within `within` (default: the whole workbench); returns that element. */
  waitForText(text: string | RegExp, within?: Locator, timeoutMs?: number): Promise<Locator>;
  /**
   * Moves the mouse over `token` on the first line of the active editor containing `lineText`; returns
   * the hover's text. With `expect`, hovers again until the text matches it (a hover shows what has
   * arrived: a diagnostic's message may show before the documentation), for up to `timeoutMs`
   * (default 30 s).
   */
  hover(lineText: string, token: string, expect?: RegExp, timeoutMs?: number): Promise<string>;
  /** Places the cursor in the active editor after `token` on the line containing `lineText` (at the end of the line without a token). */
  placeCursor(lineText: string, token?: string): Promise<void>;
  /** Triggers suggestions (Ctrl+Space) and returns them all (in list order) once the list shows. */
  triggerCompletion(): Promise<Suggestion[]>;
  /** Clicks the CodeLens whose text contains `label` (the first one, or the `index`th). */
  clickCodeLens(label: string, index?: number): Promise<void>;
  /** The row of `label` in the view titled `viewTitle` (the view must be open: openView). */
  treeItem(viewTitle: string, label: string | RegExp): Locator;
  /** Opens (focuses) a view by its title, e.g. "Services", and returns its pane. */
  openView(title: string): Promise<Locator>;
  /** The texts of the notifications shown now (toasts and the notification center). */
  notifications(): Promise<string[]>;
  /** The content frame of the webview panel whose tab title is `title` (brings it to the front). */
  webviewFrame(title: string): Promise<FrameLocator>;
  /**
   * Types `text` into the open input box (showInputBox) and accepts it. With `title`, first waits for
   * the box with that title: in a multi-step input the next box reuses the same widget, and on a busy
   * machine typing before it opens would go into the previous step.
   */
  inputBox(text: string, title?: string): Promise<void>;
  /** Picks the item labelled `label` in the open quick pick. */
  quickPick(label: string | RegExp): Promise<void>;
  /** The active editor's text as the editor shows it (rendered lines only). */
  editorText(): Promise<string>;
  close(): Promise<void>;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Polls `fn` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function poll<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = defaultTimeout,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Opens the workbench at `url` (from startCodeServer) in Chromium and waits until it is ready, with the
 * workspace folder open. Screenshots go to `artifactsDir` (e.g. test-results/shell).
 */
export async function openWorkbench(
  url: string,
  workspace: string,
  artifactsDir: string,
): Promise<Workbench> {
  // Screenshots of this run only.
  rmSync(artifactsDir, { recursive: true, force: true });
  mkdirSync(artifactsDir, { recursive: true });
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: chromiumArgs,
    timeout: 60_000,
  });
  let shot = 0;
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(defaultTimeout);
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: 60_000 });
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
    // The window title names the folder once the workspace is open.
    const folderName = workspace.split("/").filter(Boolean).pop() ?? "";
    await poll(
      `the workspace ${folderName} to open`,
      async () => ((await page.title()).includes(folderName) ? true : undefined),
      60_000,
    );

    const wb: Workbench = {
      page,
      browser,

      async screenshot(name) {
        shot += 1;
        const path = join(
          artifactsDir,
          `${String(shot).padStart(2, "0")}-${name.replace(/[^\w.-]+/g, "-")}.png`,
        );
        await page.screenshot({ path, animations: "disabled" });
        return path;
      },

      async openFile(relPath) {
        const fileName = relPath.split("/").pop() ?? relPath;
        await closeQuickInput(page);
        await page.keyboard.press("Control+P");
        const input = page.locator(".quick-input-widget input.input");
        await input.waitFor({ state: "visible" });
        await input.fill(relPath);
        // Wait for the row of that path, then open it.
        const row = page
          .locator(".quick-input-widget .monaco-list-row")
          .filter({ hasText: fileName })
          .first();
        await row.waitFor({ state: "visible" });
        await input.press("Enter");
        await page
          .locator(
            `.tabs-container .tab.active[data-resource-name="${fileName}"], .tabs-container .tab.active`,
          )
          .filter({ hasText: fileName })
          .first()
          .waitFor({ state: "visible" });
        await activeEditor(page).locator(".view-lines").waitFor({ state: "visible" });
      },

      async runCommand(title) {
        await closeQuickInput(page);
        await page.keyboard.press("F1");
        const input = page.locator(".quick-input-widget input.input");
        await input.waitFor({ state: "visible" });
        await input.fill(`>${title}`);
        const exact = new RegExp(`^${escapeRegExp(title)}(,|$|\\s)`);
        const row = page
          .locator(".quick-input-widget .monaco-list-row")
          .filter({ has: page.locator(".label-name", { hasText: title }) });
        await poll(`the command "${title}" in the palette`, async () => {
          const n = await row.count();
          for (let i = 0; i < n; i++) {
            const label = (await row.nth(i).getAttribute("aria-label")) ?? "";
            if (exact.test(label) || label.startsWith(title)) return true;
          }
          return n > 0 ? true : undefined;
        });
        // The first row is the best match; prefer an exact one when present.
        const n = await row.count();
        let target = row.first();
        for (let i = 0; i < n; i++) {
          const label = (await row.nth(i).getAttribute("aria-label")) ?? "";
          if (exact.test(label)) {
            target = row.nth(i);
            break;
          }
        }
        await target.click();
        await page
          .locator(".quick-input-widget")
          .waitFor({ state: "hidden" })
          .catch(() => {});
      },

      async waitForText(text, within, timeoutMs = defaultTimeout) {
        const scope = within ?? page.locator(".monaco-workbench");
        const loc = scope.getByText(text).filter({ visible: true }).first();
        await loc.waitFor({ state: "visible", timeout: timeoutMs });
        return loc;
      },

      async hover(lineText, token, expect, timeoutMs) {
        const editor = activeEditor(page);
        const point = await tokenPoint(page, lineText, token);
        const hoverWidget = page.locator(".monaco-hover:not(.hidden)").filter({ hasText: /\S/ });
        // Move away first so the same position hovered twice opens the hover again.
        await page.mouse.move(point.x, point.y + 200);
        return poll(
          `a hover over "${token}" on the line "${lineText}"`,
          async () => {
            await page.mouse.move(point.x - 1, point.y);
            await page.mouse.move(point.x, point.y);
            try {
              await hoverWidget.first().waitFor({ state: "visible", timeout: 3000 });
            } catch {
              return undefined;
            }
            // biome-ignore lint/performance/useDomNodeTextContent: the hover as it reads, one line per block
            const text = (await hoverWidget.first().innerText()).trim();
            // A "Loading..." hover turns into the real one, and a partial one into the whole: wait.
            if (!text || /^Loading\.\.\.$/.test(text)) return undefined;
            if (expect && !expect.test(text)) return undefined;
            void editor;
            return text;
          },
          timeoutMs,
        );
      },

      async placeCursor(lineText, token) {
        // The editor may ignore clicks while the window is still starting: click until the status
        // bar's cursor position shows the line.
        await poll(`the cursor on the line "${lineText}"`, async () => {
          const point = await tokenPoint(page, lineText, token, "end");
          const lineNumber = await page.evaluate((y) => {
            for (const el of Array.from(
              document.querySelectorAll(".editor-group-container.active .line-numbers"),
            )) {
              const r = el.getBoundingClientRect();
              if (r.top <= y && y <= r.bottom) return Number.parseInt(el.textContent ?? "", 10);
            }
            return undefined;
          }, point.y);
          await page.mouse.click(point.x, point.y);
          if (!token) await page.keyboard.press("End");
          const status = page
            .locator(".statusbar-item")
            .filter({ hasText: /Ln \d+, Col \d+/ })
            .first();
          try {
            await status.waitFor({ state: "visible", timeout: 2000 });
          } catch {
            return undefined;
          }
          const m = /Ln (\d+), Col (\d+)/.exec((await status.textContent()) ?? "");
          return m && (lineNumber === undefined || Number(m[1]) === lineNumber) ? true : undefined;
        });
      },

      async triggerCompletion() {
        const widget = page.locator(".editor-widget.suggest-widget.visible");
        let shown = "";
        return poll("suggestions", async () => {
          if (!(await widget.isVisible())) {
            await page.keyboard.press("Control+Space");
            try {
              await widget.waitFor({ state: "visible", timeout: 5000 });
            } catch {
              throw new Error(`no suggestion widget${shown ? ` (last shown: ${shown})` : ""}`);
            }
          }
          // "Loading..." shows until the server answers; "No suggestions." closes: ask again.
          const rows = widget.locator(".monaco-list-row");
          const n = await rows.count();
          if (n === 0) {
            shown = ((await widget.textContent().catch(() => "")) ?? "").trim();
            if (/No suggestions/i.test(shown)) await page.keyboard.press("Escape");
            throw new Error(`the suggestion widget shows no item: "${shown}"`);
          }
          // The list renders only the rows in view: page down through it to read them all (moving
          // the selection in the list does not change the document), then back to the top.
          const seen = new Map<string, Suggestion>();
          const read = async () => {
            const items = await rows.evaluateAll((els) =>
              els.map((e) => ({
                index: Number(e.getAttribute("data-index") ?? "0"),
                label: (e.querySelector(".label-name")?.textContent ?? "").trim(),
                ariaLabel: e.getAttribute("aria-label") ?? "",
              })),
            );
            let added = 0;
            for (const it of items) {
              const key = `${it.index}`;
              if (!seen.has(key)) {
                seen.set(key, { label: it.label, ariaLabel: it.ariaLabel || it.label });
                added++;
              }
            }
            return added;
          };
          await read();
          for (let pages = 0; pages < 50; pages++) {
            await page.keyboard.press("PageDown");
            if ((await read()) === 0) break;
          }
          for (let pages = 0; pages < 50 && seen.size > n; pages++) {
            await page.keyboard.press("PageUp");
            const first = await rows.first().getAttribute("data-index");
            if (first === "0") break;
          }
          return [...seen.entries()].sort((a, b) => Number(a[0]) - Number(b[0])).map(([, v]) => v);
        });
      },

      async clickCodeLens(label, index = 0) {
        const lens = activeEditor(page).locator(".codelens-decoration a", { hasText: label }).nth(index);
        await lens.waitFor({ state: "visible" });
        await lens.click();
      },

      treeItem(viewTitle, label) {
        const pane = viewPane(page, viewTitle);
        const rows = pane.locator(".monaco-list-row");
        return typeof label === "string"
          ? rows
              .filter({ has: page.locator(".label-name, .monaco-highlighted-label", { hasText: label }) })
              .first()
          : rows.filter({ hasText: label }).first();
      },

      async openView(title) {
        await wb.runCommand(`Focus on ${title} View`);
        const pane = viewPane(page, title);
        await pane.waitFor({ state: "visible" });
        const header = pane.locator(".pane-header").first();
        if ((await header.count()) > 0 && (await header.getAttribute("aria-expanded")) === "false") {
          await header.click();
        }
        return pane;
      },

      async notifications() {
        const items = page.locator(
          ".notifications-toasts .notification-list-item-message, .notifications-center .notification-list-item-message",
        );
        const n = await items.count();
        const out: string[] = [];
        for (let i = 0; i < n; i++) out.push(((await items.nth(i).textContent()) ?? "").trim());
        return out;
      },

      async webviewFrame(title) {
        const tab = page.locator(".tabs-container .tab").filter({ hasText: title }).first();
        await tab.waitFor({ state: "visible" });
        await tab.click();
        const outer = page.locator("iframe.webview").filter({ visible: true });
        await poll(`the webview "${title}"`, async () => ((await outer.count()) > 0 ? true : undefined));
        const frame = outer.first().contentFrame().locator("iframe#active-frame").contentFrame();
        await frame.locator("body").waitFor({ state: "attached" });
        return frame;
      },

      async inputBox(text, title) {
        const input = page.locator(".quick-input-widget input.input");
        if (title !== undefined) {
          await page
            .locator(".quick-input-widget .quick-input-title", { hasText: title })
            .waitFor({ state: "visible", timeout: 60_000 });
        }
        await input.waitFor({ state: "visible" });
        await input.fill(text);
        await input.press("Enter");
      },

      async quickPick(label) {
        // A busy machine may take a while to open the next step of a multi-step input.
        const widget = page.locator(".quick-input-widget");
        await widget.waitFor({ state: "visible", timeout: 60_000 });
        const row = widget
          .locator(".monaco-list-row")
          .filter({ has: page.locator(".label-name", { hasText: label }) })
          .first();
        await row.waitFor({ state: "visible", timeout: 60_000 });
        await row.click();
      },

      async editorText() {
        const lines = activeEditor(page).locator(".view-lines .view-line");
        const texts = await lines.evaluateAll((els) =>
          els
            .map((e) => ({
              top: Number.parseFloat((e as HTMLElement).style.top || "0"),
              text: e.textContent ?? "",
            }))
            .sort((a, b) => a.top - b.top)
            .map((l) => l.text.replace(/\u00a0/g, " ")),
        );
        return texts.join("\n");
      },

      async close() {
        await browser.close().catch(() => {});
      },
    };
    return wb;
  } catch (err) {
    await browser.close().catch(() => {});
    throw err;
  }
}

/** The editor of the active editor group's active tab. */
export function activeEditor(page: Page): Locator {
  return page.locator(".editor-group-container.active .editor-instance .monaco-editor").first();
}

/** The pane (header and body) of the view titled `title`. */
export function viewPane(page: Page, title: string): Locator {
  return page
    .locator(".split-view-view .pane")
    .filter({
      has: page.locator(".pane-header h3.title", { hasText: new RegExp(`^${escapeRegExp(title)}$`, "i") }),
    })
    .first();
}

async function closeQuickInput(page: Page): Promise<void> {
  if (await page.locator(".quick-input-widget").isVisible()) await page.keyboard.press("Escape");
}

/**
 * The screen point of `token` (its middle, or its end with at = "end") on the first rendered line of
 * the active editor that contains `lineText`. Scrolls down the editor page by page until the line shows.
 */
async function tokenPoint(
  page: Page,
  lineText: string,
  token: string | undefined,
  at: "middle" | "end" = "middle",
): Promise<{ x: number; y: number }> {
  const editor = activeEditor(page);
  await editor.locator(".view-lines").waitFor({ state: "visible" });
  let scrolled = false;
  return poll(`the line "${lineText}" in the active editor`, async () => {
    const lines = editor
      .locator(".view-lines .view-line")
      .filter({ hasText: lineText.replace(/ /g, "\u00a0") });
    const alt = editor.locator(".view-lines .view-line").filter({ hasText: lineText });
    const line =
      (await lines.count()) > 0 ? lines.first() : (await alt.count()) > 0 ? alt.first() : undefined;
    if (!line) {
      // Not rendered: go to the top once, then page down until it shows.
      await editor.locator(".view-lines").click({ position: { x: 5, y: 5 } });
      if (!scrolled) {
        await page.keyboard.press("Control+Home");
        scrolled = true;
      } else {
        await page.keyboard.press("PageDown");
      }
      return undefined;
    }
    const rect = await line.evaluate(
      (el, a: { token: string | undefined; at: string }) => {
        const text = (el.textContent ?? "").replace(/\u00a0/g, " ");
        const index = a.token === undefined ? text.length : text.indexOf(a.token);
        if (index < 0) return null;
        const start = a.token === undefined ? Math.max(0, index - 1) : index;
        const end = a.token === undefined ? index : index + a.token.length;
        // Walk the text nodes to find the DOM positions of [start, end).
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        const range = document.createRange();
        let offset = 0;
        let setStart = false;
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const len = node.textContent?.length ?? 0;
          if (!setStart && start < offset + len) {
            range.setStart(node, start - offset);
            setStart = true;
          }
          if (setStart && end <= offset + len) {
            range.setEnd(node, end - offset);
            break;
          }
          offset += len;
        }
        const r = range.getBoundingClientRect();
        return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
      },
      { token, at },
    );
    if (!rect) throw new Error(`"${token}" is not on the line "${lineText}"`);
    const y = (rect.top + rect.bottom) / 2;
    const x = at === "end" || token === undefined ? rect.right : (rect.left + rect.right) / 2;
    return { x, y };
  });
}
