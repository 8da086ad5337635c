// The measured program of bench/large-schema.bench.mjs, bundled with esbuild like the CLI and run in
// a fresh process per measurement: `node entry.js <mode> <set.binpb>`. Prints one JSON line:
// { mode, ms (time inside the process), cpuMs (CPU time of the whole process, startup included),
// maxRssMb (peak resident set), detail }.
import { readFileSync } from "node:fs";
import { create, createFileRegistry, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { openDescriptorSetFile } from "../../src/core/schema/descriptor-set-source";

async function main(): Promise<void> {
  const [mode, path, target = "google.pubsub.v1.Publisher/Publish"] = process.argv.slice(2);
  const start = performance.now();
  let detail = "";
  if (mode === "baseline") {
    const set = fromBinary(FileDescriptorSetSchema, readFileSync(path));
    const registry = createFileRegistry(set);
    let services = 0;
    for (const t of registry) if (t.kind === "service") services++;
    detail = `${set.file.length} files, ${services} services`;
  } else if (mode === "list") {
    const source = await openDescriptorSetFile(path);
    const services = await source.listServices();
    await source.close();
    detail = `${services.length} services`;
  } else if (mode === "resolve") {
    const [service, method] = target.split("/");
    const source = await openDescriptorSetFile(path);
    const desc = await source.findType(service);
    if (desc?.kind !== "service") throw new Error(`${service} not found`);
    const rpc = desc.methods.find((m) => m.name === method);
    if (!rpc) throw new Error(`${target} not found`);
    // Ready to encode: build and serialize both messages.
    const input = toBinary(rpc.input, create(rpc.input));
    const output = toBinary(rpc.output, create(rpc.output));
    await source.close();
    detail = `${rpc.input.typeName} (${input.length} B) -> ${rpc.output.typeName} (${output.length} B)`;
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  const ms = performance.now() - start;
  const usage = process.resourceUsage();
  const cpuMs = (usage.userCPUTime + usage.systemCPUTime) / 1000;
  const maxRssMb = usage.maxRSS / 1024;
  process.stdout.write(`${JSON.stringify({ mode, ms, cpuMs, maxRssMb, detail })}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
