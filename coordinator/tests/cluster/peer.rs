//! A worker's peer service, called directly: callers without the token and messages whose
//! chunks are malformed are refused, each with its reason.

use super::support::cluster::TOKEN;
use cubefarm_proto::v1;

/// A worker's peer service refuses a caller without the token or with a wrong one, and a
/// message whose chunks are malformed, each with its reason (the job goes on).
pub fn refuses_intruders(url: &str) {
    use v1::peer_client::PeerClient;
    let chunk = |kind: i32, offset: u64| v1::PeerChunk {
        job_id: 1,
        epoch: 1,
        level: 3,
        from: 7,
        part: 0,
        kind,
        offset,
        data: vec![0; 16].into(),
        last: false,
        total: 0,
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let channel =
            tonic::transport::Endpoint::from_shared(url.to_string()).unwrap().connect().await.unwrap();
        let images = v1::PeerKind::Images as i32;
        let mut bare = PeerClient::new(channel.clone());
        let refused = bare.deliver(tokio_stream::iter(vec![chunk(images, 0)])).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
        let with = |token: &str| {
            let header: tonic::metadata::MetadataValue<_> = format!("Bearer {token}").parse().unwrap();
            PeerClient::with_interceptor(channel.clone(), move |mut r: tonic::Request<()>| {
                r.metadata_mut().insert("authorization", header.clone());
                Ok(r)
            })
        };
        let refused =
            with("wrong-token").deliver(tokio_stream::iter(vec![chunk(images, 0)])).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
        let mut client = with(TOKEN);
        let unknown = client.deliver(tokio_stream::iter(vec![chunk(999, 0)])).await.unwrap_err();
        assert!(unknown.message().contains("unknown message kind"), "{unknown:?}");
        let gap =
            client.deliver(tokio_stream::iter(vec![chunk(images, 0), chunk(images, 64)])).await.unwrap_err();
        assert!(gap.message().contains("out of order"), "{gap:?}");
        let cut = client.deliver(tokio_stream::iter(vec![chunk(images, 0)])).await.unwrap_err();
        assert!(cut.message().contains("cut short"), "{cut:?}");
        // A length named beyond the job's largest message is refused before any is buffered,
        // and chunks that do not make the length named are refused.
        let huge = v1::PeerChunk { total: 1 << 40, ..chunk(images, 0) };
        let long = client.deliver(tokio_stream::iter(vec![huge])).await.unwrap_err();
        assert!(long.message().contains("longer than"), "{long:?}");
        let short = v1::PeerChunk { total: 24, last: true, ..chunk(images, 0) };
        let lied = client.deliver(tokio_stream::iter(vec![short])).await.unwrap_err();
        assert!(lied.message().contains("do not make its length"), "{lied:?}");
    });
}
