# syntax=docker/dockerfile:1
# The one `fleet` image: `fleet controller …` on the hub, `fleet agent …` on every cluster.
#
#   docker build -t fleet:dev .
#   docker run --rm fleet:dev --help
#
# Stage 1 builds the `fleet` binary of crate fleet-cli in release mode; stage 2 ships only that binary on
# distroless (glibc, CA certificates, tzdata, no shell) as the non-root user 65532.

# The toolchain this repository is built and tested with (the workspace MSRV is 1.89, dependencies may need more).
ARG RUST_VERSION=1.95
ARG DEBIAN_RELEASE=bookworm

FROM docker.io/library/rust:${RUST_VERSION}-${DEBIAN_RELEASE} AS build
WORKDIR /src
# Fetch dependencies in their own layer so a source change does not download them again.
COPY Cargo.toml Cargo.lock ./
# Build settings (mimalloc's page sizes, see the file).
COPY .cargo ./.cargo
COPY crates ./crates
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    cargo fetch --locked
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --locked --release -p fleet-cli --bin fleet \
 && install -D -m 0755 target/release/fleet /out/fleet

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/fleet /usr/local/bin/fleet
USER 65532:65532
# Metrics (controller) and git push webhook (controller).
EXPOSE 8081 8080
ENTRYPOINT ["/usr/local/bin/fleet"]
CMD ["--help"]
