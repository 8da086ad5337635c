// The settings table (src/extension/settings-table.ts) against the manifest, and the mappings made
// from it: each default, allowed value and range equals package.json's contributes.configuration;
// values of the wrong type read as the default; the language server's settings in a trusted and a
// restricted workspace; the listener's settings.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { defaultSettings } from "../../src/core/analysis/settings";
import {
  checkSetting,
  listenerSettingsFrom,
  type SettingKey,
  type SettingsRead,
  serverSettingsFrom,
  settingsTable,
} from "../../src/extension/settings-table";
import { repoRoot } from "../support/cli";

interface Property {
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  type: string;
}

const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  contributes: { configuration: { properties: Record<string, Property> } };
};
const properties = manifest.contributes.configuration.properties;
const keys = Object.keys(settingsTable) as SettingKey[];

/** A reader over given values (the rest read as their defaults). */
function reader(values: Partial<Record<SettingKey, unknown>>): SettingsRead {
  return (key) => checkSetting(key, values[key]);
}

describe("the settings table", () => {
  test("has every protocall.* setting of package.json, and only those", () => {
    assert.deepEqual(keys.map((k) => `protocall.${k}`).sort(), Object.keys(properties).sort());
  });

  for (const key of keys) {
    test(`protocall.${key}: default, values and range as package.json declares them`, () => {
      const p = properties[`protocall.${key}`];
      const spec = settingsTable[key] as {
        default: unknown;
        values?: unknown[];
        minimum?: number;
        maximum?: number;
      };
      assert.deepEqual(spec.default, p.default);
      assert.deepEqual(spec.values, p.enum);
      assert.equal(spec.minimum, p.minimum);
      assert.equal(spec.maximum, p.maximum);
      assert.equal(Array.isArray(spec.default) ? "array" : typeof spec.default, p.type);
    });
  }

  test("a missing value or one of the wrong type reads as the default", () => {
    assert.equal(checkSetting("reflection", undefined), true);
    assert.equal(checkSetting("reflection", "no"), true);
    assert.equal(checkSetting("protocol", "http3"), "connect");
    assert.equal(checkSetting("protocol", "grpc"), "grpc");
    assert.equal(checkSetting("listener.port", "8080"), 0);
    assert.equal(checkSetting("timeout", Number.NaN), 0);
    assert.deepEqual(checkSetting("servers", { url: "x" }), []);
  });

  test("numbers are held to their range; string lists keep their strings", () => {
    assert.equal(checkSetting("history.size", 0), 1);
    assert.equal(checkSetting("history.size", 500), 200);
    assert.equal(checkSetting("history.size", 7), 7);
    assert.equal(checkSetting("listener.port", 70000), 65535);
    assert.deepEqual(checkSetting("schemas", ["a.binpb", 3, null, "dir"]), ["a.binpb", "dir"]);
  });
});

describe("the language server's settings", () => {
  test("in a trusted workspace: every setting, reflection timeout in milliseconds", () => {
    const read = reader({
      schemas: ["api"],
      bufPath: "/opt/buf",
      compiler: "protoc",
      protocPath: "/opt/protoc",
      environment: "dev",
      envFile: "env/protocall.env.json",
      reflectionTimeout: 2.5,
    });
    assert.deepEqual(serverSettingsFrom(read, true), {
      schemas: ["api"],
      workspaceBuild: true,
      reflection: true,
      reflectionTimeoutMs: 2500,
      bufPath: "/opt/buf",
      compiler: "protoc",
      protocPath: "/opt/protoc",
      environment: "dev",
      envFile: "env/protocall.env.json",
    });
  });

  test("in a restricted workspace: no builds, no reflection, no binaries or files", () => {
    const read = reader({
      schemas: ["api"],
      bufPath: "/opt/buf",
      compiler: "protoc",
      protocPath: "/p",
      envFile: "e.json",
    });
    assert.deepEqual(serverSettingsFrom(read, false), {
      schemas: [],
      workspaceBuild: false,
      reflection: false,
      reflectionTimeoutMs: 5000,
      compiler: "protoc",
    });
  });

  test("defaults: what the server itself assumes", () => {
    assert.deepEqual(serverSettingsFrom(reader({}), true), defaultSettings());
  });
});

describe("the listener's settings", () => {
  test("defaults, and a forward URL trimmed (blank: none)", () => {
    assert.deepEqual(listenerSettingsFrom(reader({})), {
      host: "127.0.0.1",
      port: 0,
      tls: true,
      maxStoreBytes: 64 * 1024 * 1024,
    });
    assert.equal(
      listenerSettingsFrom(reader({ "listener.forwardTo": "  http://127.0.0.1:9/x " })).forwardTo,
      "http://127.0.0.1:9/x",
    );
    assert.equal(listenerSettingsFrom(reader({ "listener.forwardTo": "   " })).forwardTo, undefined);
  });
});
