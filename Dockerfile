# syntax=docker/dockerfile:1
#
# skillreg in a container: docker build -t skillreg:local .  (or: docker compose build)
# Static checks without a Docker engine: scripts/check-dockerfile.sh

# ---------------------------------------------------------------- builder
# Same Rust as rust-toolchain.toml (check-dockerfile.sh compares them). rust-toolchain.toml
# itself is not copied in, so rustup downloads nothing and the image's toolchain builds.
FROM rust:1.95.0-bookworm AS builder
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs ./
COPY migrations ./migrations
COPY skills-seed ./skills-seed
COPY templates ./templates
COPY src ./src
# The crate registry and target/ live in BuildKit cache mounts, so a source change rebuilds
# only skillreg itself; the binary is copied out of the cache mount in the same step.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/usr/local/cargo/git \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin skillreg \
    && install -D -m 0755 target/release/skillreg /out/skillreg

# ---------------------------------------------------------------- runtime
FROM debian:bookworm-slim

# ca-certificates for the client commands (publish, token ...) talking to https registries;
# git for `skillreg import git` and `skillreg sync`, which read repositories with it.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git \
    && rm -rf /var/lib/apt/lists/*

# A fixed uid/gid, so a bind-mounted or pre-created data directory can be chowned to 10001.
RUN groupadd --gid 10001 skillreg \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /var/lib/skillreg \
        --shell /usr/sbin/nologin skillreg \
    && install -d -o 10001 -g 10001 -m 0750 /var/lib/skillreg /var/lib/skillreg-snapshots

COPY --from=builder /out/skillreg /usr/local/bin/skillreg
# bash's /dev/tcp instead of curl: see the script.
COPY --chmod=0755 scripts/docker-healthcheck.sh /usr/local/bin/skillreg-healthcheck

ENV SKILLREG_DATA_DIR=/var/lib/skillreg \
    SKILLREG_LISTEN=0.0.0.0:8080
# Declared after the chown: a new named volume starts as a copy of this directory, owned by
# skillreg.
VOLUME ["/var/lib/skillreg"]
WORKDIR /var/lib/skillreg
USER 10001:10001
EXPOSE 8080

# Liveness: GET /healthz on the port of SKILLREG_LISTEN. docker-compose.yml checks /readyz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["skillreg-healthcheck"]

ENTRYPOINT ["skillreg"]
CMD ["serve"]
