# syntax=docker/dockerfile:1
# The slopewatch server (default target) and, as target `agent`, the agent with the C toolchains
# it measures. Build: `docker build -t slopewatch .` / `docker build --target agent -t slopewatch-agent .`

FROM rust:1-bookworm AS build
WORKDIR /src
# Dependencies first, against stub sources, so this layer is reused until a manifest changes.
COPY Cargo.toml Cargo.lock rustfmt.toml ./
COPY core/Cargo.toml core/
COPY ingest-agent/Cargo.toml ingest-agent/build.rs ingest-agent/
RUN mkdir -p src core/src ingest-agent/src benches \
    && echo 'fn main() {}' > src/main.rs && touch src/lib.rs core/src/lib.rs \
    && echo 'fn main() {}' > ingest-agent/src/main.rs && touch ingest-agent/src/lib.rs \
    && echo 'fn main() {}' > benches/ingest.rs \
    && cargo build --release --locked -p slopewatch -p slopewatch-agent \
    && rm -rf src core/src ingest-agent/src benches
COPY . .
# Cargo compares modification times: make sure the real sources count as newer than the stubs.
RUN find src core/src ingest-agent/src -name '*.rs' -exec touch {} + \
    && cargo build --release --locked -p slopewatch -p slopewatch-agent \
    && strip target/release/slopewatch target/release/slopewatch-agent

FROM debian:bookworm-slim AS server
RUN useradd --system --uid 10001 --home-dir /var/lib/slopewatch --create-home slopewatch
COPY --from=build /src/target/release/slopewatch /usr/local/bin/slopewatch
COPY static /usr/share/slopewatch/static
ENV SLOPEWATCH_BIND=0.0.0.0:3000 \
    SLOPEWATCH_STATIC_DIR=/usr/share/slopewatch/static \
    DATABASE_URL=sqlite:///var/lib/slopewatch/slopewatch.db
USER slopewatch
WORKDIR /var/lib/slopewatch
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["slopewatch", "health", "--url", "http://127.0.0.1:3000/healthz"]
ENTRYPOINT ["slopewatch"]
CMD ["serve"]

FROM debian:bookworm-slim AS agent
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev musl-tools ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10002 --create-home slopewatch
COPY --from=build /src/target/release/slopewatch-agent /usr/local/bin/slopewatch-agent
USER slopewatch
ENTRYPOINT ["slopewatch-agent"]
CMD ["run", "--toolchain", "gcc-glibc=gcc", "--toolchain", "musl-gcc=musl-gcc"]

# The server is the default image.
FROM server
