// The google.protobuf wrapper messages (DoubleValue … BytesValue) and the scalar each one wraps. Proto
// JSON writes a wrapper as its bare scalar, so every part that reads or writes JSON by the schema
// (the output formatter, body checks, response paths, JSON paths, request skeletons) needs this one
// list; a part that kept its own copy could miss a wrapper the others know.
import { ScalarType } from "@bufbuild/protobuf";

/** Each wrapper message's full name and the scalar type of its `value`. */
export const wrapperScalars: Readonly<Record<string, ScalarType>> = {
  "google.protobuf.DoubleValue": ScalarType.DOUBLE,
  "google.protobuf.FloatValue": ScalarType.FLOAT,
  "google.protobuf.Int64Value": ScalarType.INT64,
  "google.protobuf.UInt64Value": ScalarType.UINT64,
  "google.protobuf.Int32Value": ScalarType.INT32,
  "google.protobuf.UInt32Value": ScalarType.UINT32,
  "google.protobuf.BoolValue": ScalarType.BOOL,
  "google.protobuf.StringValue": ScalarType.STRING,
  "google.protobuf.BytesValue": ScalarType.BYTES,
};

/** The full names of the wrapper messages. */
export const wrapperTypeNames: ReadonlySet<string> = new Set(Object.keys(wrapperScalars));

/** The scalar a wrapper message stands for in JSON, or undefined for any other message. */
export function wrappedScalar(typeName: string): ScalarType | undefined {
  return Object.hasOwn(wrapperScalars, typeName) ? wrapperScalars[typeName] : undefined;
}
