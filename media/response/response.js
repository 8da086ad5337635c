// The response panel's script: shows the HTML the extension renders (already escaped there), appends
// streamed messages, and sends button clicks back. No server text is ever interpreted here.
(() => {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById("root");
  window.addEventListener("message", (event) => {
    const m = event.data;
    if (!m || typeof m !== "object") return;
    if (m.type === "render") {
      root.innerHTML = m.html;
      root.dataset.entry = String(m.id);
    } else if (m.type === "append" && root.dataset.entry === String(m.id)) {
      const list = document.getElementById("messages");
      if (list) {
        list.insertAdjacentHTML("beforeend", m.html);
        if (m.follow) list.lastElementChild?.scrollIntoView({ block: "nearest" });
      }
    }
  });
  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-action]") : null;
    if (button && !button.disabled) vscode.postMessage({ action: button.dataset.action });
  });
  vscode.postMessage({ action: "ready" });
})();
