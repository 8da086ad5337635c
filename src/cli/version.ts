// A named import, so the bundle carries only the version and not the whole manifest.
import { version as packageVersion } from "../../package.json";

export const version: string = packageVersion;
