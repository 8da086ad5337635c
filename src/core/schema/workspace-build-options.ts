// The compiler settings (`protocall.compiler`, `protocall.protocPath`, `protocall.bufPath`) as the
// options of a workspace build. Every user of a build goes through this one function (the language
// server's workspace and `@schema` builds, the editor's Send fallback), so none of them can ignore a
// setting: with `compiler: protoc`, hover and Send both build with protoc.

export interface CompilerSettings {
  /** The buf binary to build with instead of the bundled one. */
  bufPath?: string;
  /** The compiler of workspace builds (default buf). */
  compiler?: "buf" | "protoc";
  /** The protoc binary when `compiler` is protoc (default: protoc on PATH). */
  protocPath?: string;
}

/** The compiler options of buildWorkspace and openSchema. */
export interface WorkspaceBuildOptions {
  bufPath?: string;
  /** Set when the build runs protoc instead of buf: a path, or a name looked up on PATH. */
  protocPath?: string;
}

/** The build options for these settings (a missing compiler is reported when a build needs it). */
export function workspaceBuildOptions(s: CompilerSettings): WorkspaceBuildOptions {
  if (s.compiler !== "protoc") return { bufPath: s.bufPath };
  return { bufPath: s.bufPath, protocPath: s.protocPath || "protoc" };
}
