#!/usr/bin/env bash
# Lints the API contract (openapi.yaml) with Spectral: the built-in OpenAPI rules (structure, examples
# against their schemas, operation ids, ...) plus the OWASP API Security ruleset, as configured in
# service/src/test/spectral/spectral.yaml. Exits non-zero on any finding of severity warn or worse.
#
# Needs node and npm. The two npm packages are installed once into a cache directory (not into the
# repository): $SPECTRAL_HOME, default ${XDG_CACHE_HOME:-$HOME/.cache}/ledgerline/spectral.
#
#   service/src/test/spectral/lint.sh                      # lint openapi.yaml
#   service/src/test/spectral/lint.sh -f json              # extra arguments go to `spectral lint`
set -euo pipefail

SPECTRAL_CLI_VERSION=6.16.3
OWASP_RULESET_VERSION=2.0.1

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)"
home="${SPECTRAL_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/ledgerline/spectral}"

for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "lint.sh: $tool is required (Node.js 18 or later)" >&2
        exit 2
    fi
done

installed_version() {
    node -p "require('$home/node_modules/$1/package.json').version" 2>/dev/null || true
}

if [[ "$(installed_version @stoplight/spectral-cli)" != "$SPECTRAL_CLI_VERSION" \
   || "$(installed_version @stoplight/spectral-owasp-ruleset)" != "$OWASP_RULESET_VERSION" ]]; then
    echo "lint.sh: installing Spectral $SPECTRAL_CLI_VERSION and the OWASP ruleset $OWASP_RULESET_VERSION into $home" >&2
    mkdir -p "$home"
    [[ -f "$home/package.json" ]] || echo '{"name": "ledgerline-spectral", "private": true}' >"$home/package.json"
    npm install --prefix "$home" --no-audit --no-fund --loglevel=error \
        "@stoplight/spectral-cli@$SPECTRAL_CLI_VERSION" \
        "@stoplight/spectral-owasp-ruleset@$OWASP_RULESET_VERSION" >&2
fi

# spectral.yaml extends "@stoplight/spectral-owasp-ruleset" by package name; Spectral resolves that with
# Node's module resolution from the ruleset's directory, which does not see the cache directory, so point
# NODE_PATH at it.
cd "$root"
export NODE_PATH="$home/node_modules${NODE_PATH:+:$NODE_PATH}"
exec "$home/node_modules/.bin/spectral" lint openapi.yaml \
    --ruleset service/src/test/spectral/spectral.yaml \
    --fail-severity=warn \
    "$@"
