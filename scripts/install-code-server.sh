#!/usr/bin/env bash
# Installs what the editor tests and `npm start` need: Debian's Chromium (editor tests only), ripgrep and the Kerberos
# headers (apt-get, only when missing), and code-server 4.100.3 (VS Code 1.100, the newest line that
# runs on Node 20) into .tools/code-server. code-server's own postinstall downloads binaries and fails
# here (and refuses to run as root), so it is replaced by the equivalent steps below.
# Idempotent: a stamp file records a finished install; a second run returns at once.
# Usage: bash scripts/install-code-server.sh [--force] [--no-chromium]
#   --force        reinstall code-server
#   --no-chromium  skip Chromium (`npm start` opens the editor in the user's own browser; only the
#                  editor tests drive Chromium)
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=4.100.3
TOOLS="$PWD/.tools/code-server"
STAMP="$TOOLS/.installed-$VERSION"
START=$(date +%s)
FORCE=0
CHROMIUM=1
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    --no-chromium) CHROMIUM=0 ;;
    *) echo "install-code-server.sh: unknown argument $arg (use --force or --no-chromium)" >&2; exit 2 ;;
  esac
done

export DEBIAN_FRONTEND=noninteractive
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

missing=()
if [ "$CHROMIUM" = 1 ]; then
  command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
fi
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
[ -f /usr/include/gssapi/gssapi.h ] || dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== apt-get install ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ -f "$STAMP" ] && [ "$FORCE" = 0 ]; then
  echo "code-server $VERSION is installed in $TOOLS"
  exit 0
fi

echo "== code-server $VERSION into $TOOLS"
rm -rf "$TOOLS"
mkdir -p "$TOOLS"
cd "$TOOLS"
echo '{ "name": "protocall-tools", "private": true }' > package.json
npm install --no-save --no-package-lock --ignore-scripts --loglevel=error "code-server@$VERSION"
npm rebuild argon2 --loglevel=error

VSC="$TOOLS/node_modules/code-server/lib/vscode"
cd "$VSC"
npm install --ignore-scripts --omit=dev --no-package-lock --loglevel=error
# node-pty's install runs `npx node-gyp`: let npx install it without asking.
npm_config_yes=true npm rebuild kerberos node-pty @parcel/watcher @vscode/spdlog native-watchdog @vscode/deviceid --loglevel=error
# @vscode/ripgrep's own install downloads rg from GitHub: use Debian's.
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
ln -sfn node_modules node_modules.asar
cd extensions
npm install --ignore-scripts --omit=dev --no-package-lock --loglevel=error

touch "$STAMP"
echo "code-server $VERSION installed in $TOOLS in $(( $(date +%s) - START )) s"
