// `protocall convert`: converts a message between protobuf JSON and binary, stdin to stdout.
// The webhook types (buf.alpha.webhook.v1alpha1.EventRequest and friends) are built in.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  createRegistry,
  type DescMessage,
  fromBinary,
  fromJson,
  type JsonValue,
  type MessageShape,
  type Registry,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { errorMessage, ProtocallError } from "../../core/errors";
import { openSchema } from "../../core/schema/open-schema";
import { createResolver } from "../../core/schema/resolver";
import type { SchemaSource } from "../../core/schema/types";
import { registry } from "../../core/webhooks/type-registry";
import { defineFlags, flagsHelp, parseArgs } from "../args";
import type { CliContext, Command } from "../context";

const flags = defineFlags({
  type: { kind: "string", value: "NAME", required: true, help: "the fully qualified message name" },
  from: {
    kind: "string",
    choices: ["json", "binary"],
    default: "json",
    help: "input format",
  },
  to: {
    kind: "string",
    choices: ["json", "binary"],
    defaultText: "binary; json with --from binary",
    help: "output format",
  },
  data: { kind: "string", short: "d", value: "DATA", help: "@FILE, - or inline JSON" },
  schema: { kind: "strings", value: "SPEC", help: "where --type is defined" },
});

const help = `Usage: protocall convert --type NAME [--from json|binary] [--to json|binary] [-d @FILE|-|JSON]

Converts one message between protobuf JSON and binary. Input comes from -d (@FILE, "-" for standard
input, or inline JSON text), standard input by default; output goes to standard output.

Built-in types: buf.alpha.webhook.v1alpha1.EventRequest (also "EventRequest") and the other messages
of the webhook APIs. Other types need --schema: a directory of .proto files (built with buf), a .proto
file, a descriptor-set file, a registry module (REMOTE/owner/module[:ref], fetched as curl --schema
fetches it), or - (a descriptor set on standard input; then give the data with -d @FILE).
Example, testing a listener by hand:
  protocall convert --type EventRequest -d @event.json > event.bin
  curl --data-binary @event.bin -H 'Content-Type: application/proto' URL

Flags:
${flagsHelp(flags)}`;

function findType(name: string): DescMessage {
  const direct = registry.getMessage(name);
  if (direct) return direct;
  const candidates: DescMessage[] = [];
  for (const t of registry) {
    if (t.kind === "message" && (t.name === name || t.typeName.endsWith(`.${name}`))) candidates.push(t);
  }
  if (candidates.length === 1) return candidates[0];
  if (candidates.length > 1) {
    throw new ProtocallError(
      `--type "${name}" is ambiguous: use one of ${candidates.map((c) => c.typeName).join(", ")}`,
    );
  }
  throw new ProtocallError(
    `--type "${name}" is not a built-in message type; built in: buf.alpha.webhook.v1alpha1.EventRequest and the webhook API messages`,
  );
}

async function readInput(data: string | undefined, ctx: CliContext): Promise<Buffer> {
  if (data === undefined || data === "-" || data === "@-") {
    const chunks: Buffer[] = [];
    for await (const c of ctx.stdin) chunks.push(typeof c === "string" ? Buffer.from(c) : (c as Buffer));
    return Buffer.concat(chunks);
  }
  if (data.startsWith("@")) {
    try {
      return readFileSync(resolve(ctx.cwd, data.slice(1)));
    } catch (err) {
      throw new ProtocallError(`cannot read -d file ${data.slice(1)}: ${errorMessage(err)}`);
    }
  }
  return Buffer.from(data, "utf8");
}

export const command: Command = {
  async run(args, ctx) {
    const { values, help: helpWanted } = parseArgs(args, flags, { command: "protocall convert" });
    if (helpWanted) {
      ctx.stdout.write(help);
      return 0;
    }
    const from = values.from;
    const to = values.to ?? (from === "binary" ? "json" : "binary");
    const schemas = values.schema;
    if (schemas.includes("-") && (values.data === undefined || values.data === "-" || values.data === "@-")) {
      throw new ProtocallError("--schema - reads standard input, so give the message with -d @FILE");
    }
    let schema: DescMessage;
    let types: Registry = registry;
    let closeSchema = async () => {};
    if (schemas.length === 0) {
      schema = findType(values.type);
    } else {
      const sources: SchemaSource[] = [];
      try {
        for (const spec of schemas)
          sources.push(await openSchema(spec, { cwd: ctx.cwd, stdin: ctx.stdin, env: ctx.env }));
      } catch (err) {
        await Promise.all(sources.map((src) => src.close()));
        throw err;
      }
      const resolver = createResolver(sources);
      closeSchema = () => resolver.close();
      try {
        schema = await resolver.findMessage(values.type);
        types = createRegistry(registry, await resolver.registry([schema.typeName]));
      } catch (err) {
        await closeSchema();
        throw err;
      }
    }
    try {
      return await convert(schema, types, from, to, values.data, ctx);
    } finally {
      await closeSchema();
    }
  },
};

async function convert(
  schema: DescMessage,
  types: Registry,
  from: string,
  to: string,
  data: string | undefined,
  ctx: CliContext,
): Promise<number> {
  const input = await readInput(data, ctx);
  let message: MessageShape<DescMessage>;
  if (from === "json") {
    let json: JsonValue;
    try {
      json = JSON.parse(input.toString("utf8")) as JsonValue;
    } catch (err) {
      throw new ProtocallError(`input is not valid JSON: ${errorMessage(err)}`);
    }
    try {
      message = fromJson(schema, json, { registry: types });
    } catch (err) {
      throw new ProtocallError(`input is not a valid ${schema.typeName} in JSON: ${errorMessage(err)}`);
    }
  } else {
    try {
      message = fromBinary(schema, input);
    } catch (err) {
      throw new ProtocallError(`input is not a valid binary ${schema.typeName}: ${errorMessage(err)}`);
    }
  }
  if (to === "binary") {
    const bytes = toBinary(schema, message);
    await new Promise<void>((resolve, reject) =>
      ctx.stdout.write(bytes, (err) => (err ? reject(err) : resolve())),
    );
  } else {
    ctx.stdout.write(`${JSON.stringify(toJson(schema, message, { registry: types }), null, 2)}\n`);
  }
  return 0;
}
