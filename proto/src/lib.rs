//! gRPC protocol between the `coordinator` and `worker` binaries.
//!
//! The messages and the `Coordinator` service are generated at build time
//! from `proto/cubefarm.proto` (see `build.rs`; no `protoc` needed).

pub mod auth;
pub mod tls;

/// Generated code for protobuf package `cubefarm.v1`.
pub mod v1 {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]
    tonic::include_proto!("cubefarm.v1");
}

pub use v1::coordinator_client::CoordinatorClient;
pub use v1::coordinator_server::{Coordinator, CoordinatorServer};

/// Version of the coordinator/worker protocol. Sent by workers in
/// `RegisterRequest.protocol_version`; bump it on any incompatible change.
pub const PROTOCOL_VERSION: u32 = 17;

/// Largest `data` payload, in bytes, put in one `ShardChunk` or `InputChunk`
/// (1 MiB).
///
/// This keeps every streamed message well under tonic's default 4 MiB limit
/// on decoded message size, leaving ample room for the other fields and
/// protobuf framing, so neither side needs to raise
/// `max_decoding_message_size`.
pub const MAX_CHUNK_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn chunk_limit_is_well_under_tonic_default() {
        const TONIC_DEFAULT_MAX_DECODE: usize = 4 << 20;
        const { assert!(MAX_CHUNK_BYTES * 2 <= TONIC_DEFAULT_MAX_DECODE) };
    }

    #[test]
    fn shard_chunk_round_trips() {
        let chunk = v1::ShardChunk {
            task_id: 7,
            attempt: 2,
            offset: 1 << 40,
            data: vec![0xAB; MAX_CHUNK_BYTES],
            last: true,
        };
        let bytes = chunk.encode_to_vec();
        assert!(bytes.len() < 4 << 20);
        let back = v1::ShardChunk::decode(bytes.as_slice()).expect("decode");
        assert_eq!(back, chunk);
    }

    #[test]
    fn poll_reply_task_is_optional() {
        let reply = v1::PollTaskReply::default();
        assert!(reply.task.is_none());
        assert!(!reply.done);
    }
}
