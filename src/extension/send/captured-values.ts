// The values `# @capture` options took, per .rpc file, for the requests after them: Send and the
// Test Explorer add what each request captures, and every later request of the same file is
// prepared with them (`{{token}}`). Kept for the window's lifetime; a file's values are replaced
// one name at a time, so sending a request again updates what it captured.
export class CapturedValues {
  private readonly byFile = new Map<string, Record<string, string>>();

  /** The values captured so far by requests of the file (by its URI string). */
  get(file: string): Readonly<Record<string, string>> {
    return this.byFile.get(file) ?? {};
  }

  add(file: string, values: Readonly<Record<string, string>>): void {
    if (Object.keys(values).length === 0) return;
    this.byFile.set(file, { ...this.get(file), ...values });
  }

  /** Forgets a file's values (a test run of the whole file starts from none). */
  clear(file: string): void {
    this.byFile.delete(file);
  }
}
