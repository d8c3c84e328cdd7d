# The coordinator and worker binaries in a small image, for scripts/k8s/cubefarm.yaml:
#   docker build -t cubefarm:latest .
FROM rust:1.89-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p coordinator -p worker

FROM debian:bookworm-slim
COPY --from=build /src/target/release/coordinator /src/target/release/worker /usr/local/bin/
WORKDIR /results
ENTRYPOINT []
