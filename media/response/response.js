// The response panel's script: shows the HTML the extension renders (already escaped there), appends
// streamed messages, and sends button clicks back. No server text is ever interpreted here.
(() => {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById("root");
  window.addEventListener("message", (event) => {
    const m = event.data;
    if (!m || typeof m !== "object") return;
    if (m.type === "render") {
      // A live stream re-renders as messages come and go: what is being typed stays.
      const input = document.getElementById("live-input");
      const typed = input && root.dataset.entry === String(m.id) ? input.value : undefined;
      root.innerHTML = m.html;
      root.dataset.entry = String(m.id);
      const again = document.getElementById("live-input");
      if (again && typed !== undefined) again.value = typed;
      const timeline = document.getElementById("timeline");
      timeline?.lastElementChild?.scrollIntoView({ block: "nearest" });
    } else if (m.type === "clearInput") {
      const input = document.getElementById("live-input");
      if (input) input.value = "";
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
    if (!button || button.disabled) return;
    const input = button.dataset.input ? document.getElementById(button.dataset.input) : null;
    vscode.postMessage(
      input ? { action: button.dataset.action, text: input.value } : { action: button.dataset.action },
    );
  });
  vscode.postMessage({ action: "ready" });
})();
