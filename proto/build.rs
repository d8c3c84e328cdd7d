//! Compiles `cubefarm.proto` with the pure-Rust `protox` compiler, so no
//! `protoc` binary is needed, and generates prost messages plus tonic client
//! and server code into `OUT_DIR`.

use std::fmt;
use std::path::{Path, PathBuf};

use miette::Diagnostic;

const PROTO_FILE: &str = "cubefarm.proto";

/// Error whose `Debug` output (what Cargo shows when `main` fails) is the
/// plain message rather than a quoted string.
struct BuildError(String);

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn main() -> Result<(), BuildError> {
    let manifest_dir = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .ok_or_else(|| BuildError("CARGO_MANIFEST_DIR is not set".into()))?,
    );
    let proto_path = manifest_dir.join(PROTO_FILE);
    println!("cargo:rerun-if-changed={PROTO_FILE}");
    println!("cargo:rerun-if-changed=build.rs");

    let fds = protox::compile([&proto_path], [&manifest_dir])
        .map_err(|e| BuildError(describe_protox_error(&e, &proto_path)))?;

    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // A message between workers is sliced into chunks and read back from the receive
        // buffer without a copy of each chunk.
        .bytes(".cubefarm.v1.PeerChunk.data")
        .compile_fds(fds)
        .map_err(|e| {
            BuildError(format!("failed to generate Rust code from {}: {e}", proto_path.display()))
        })?;
    Ok(())
}

/// `file:line:col: message` for a protox error, with the location taken from
/// the error's first labelled span when it has one.
fn describe_protox_error(err: &protox::Error, proto_path: &Path) -> String {
    let mut location = err.file().map_or_else(|| proto_path.display().to_string(), str::to_owned);
    if let (Some(src), Some(label)) = (err.source_code(), err.labels().and_then(|mut labels| labels.next())) {
        if let Ok(span) = src.read_span(label.inner(), 0, 0) {
            location =
                format!("{}:{}:{}", span.name().unwrap_or(&location), span.line() + 1, span.column() + 1);
        }
    }
    format!("failed to compile {location}: {err}")
}
