// What VS Code's chat shows while one of Protocall's tools runs ("Calling http://…/Greet"): named from
// the tool's arguments, so the user sees which server is called and which file is run. Without
// `vscode`, so it is tested directly.

function text(input: unknown, key: string): string | undefined {
  const v = input && typeof input === "object" ? (input as Record<string, unknown>)[key] : undefined;
  return typeof v === "string" && v !== "" ? v : undefined;
}

export function invocationMessage(tool: string, input: unknown): string {
  switch (tool) {
    case "list_services": {
      const server = text(input, "server");
      return server ? `Listing the services of ${server}` : "Listing the workspace's services";
    }
    case "describe":
      return `Describing ${text(input, "name") ?? "a Protobuf element"}`;
    case "call_method":
      return `Calling ${text(input, "url") ?? "a method"}`;
    case "run_file": {
      const name = text(input, "name");
      return `Running ${text(input, "file") ?? "a request file"}${name ? ` (${name})` : ""}`;
    }
    case "check_files":
      return "Checking request files";
    default:
      return `Running ${tool}`;
  }
}
