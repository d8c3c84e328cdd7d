//! The worker's own pieces that need no coordinator: the row-search messages converted both
//! ways and cut into chunks, the links' measured rates, and the H48 rows it keeps.

use bytes::Bytes;
use cubefarm_proto::v1;
use cubefarm_proto::v1::PeerKind;
use cubefarm_proto::MAX_CHUNK_BYTES;
use shared::bfs::Direction;
use shared::h48::{ColumnSet, H11_COLUMNS};
use shared::runtime::rows::{JobInfo, LevelOrder, Plan, Status};
use shared::shard::Codec;
use shared::space::RowCounts;
use std::sync::Arc;
use std::time::{Duration, Instant};
use worker::kept::Kept;
use worker::rows::link::{is_loopback, Compress, Links};
use worker::rows::peer::{Joined, Meta};
use worker::rows::sync::{job_of, plan_of, put_status, reply_of, status_of};

#[test]
fn status_and_plan_cross_unchanged() {
    let status = Status {
        ready: true,
        room: 7,
        epoch: 9,
        version: 4,
        settled: true,
        lacking: vec![3],
        finished: Some((4, vec![(1, RowCounts { entries: 1, positions: 2, classes: 3, self_inverse: 4 })])),
        progress: Some((0, 35)),
        failure: Some("x".into()),
    };
    let mut r = v1::RowsSyncRequest::default();
    put_status(&mut r, 5, &status);
    assert_eq!(status_of(&r).unwrap(), status);
    let job = JobInfo { id: 5, spec: "h/h".into(), rows: 10, rows_per_part: 3, positions_only: true };
    for level in [None, Some(LevelOrder { depth: 3, direction: Direction::Backward, upload: true })] {
        let plan =
            Plan { epoch: 9, version: 2, owner: vec![1, 2], depth: vec![3, 4], source: vec![1, 0], level };
        let reply = reply_of(&job, &plan, vec![(1, "http://a".into())]);
        assert_eq!(plan_of(&reply).unwrap(), plan);
        assert_eq!(job_of(&reply), job);
    }
    r.finished_counts.pop();
    assert!(status_of(&r).is_err(), "counts that do not fill their parts");
}

#[test]
fn overlapping_sends_count_the_link_once_slow_links_get_zstd_and_local_ones_raw() {
    let links = Links::default();
    let t = Instant::now();
    let ms = |n: u64| t + Duration::from_millis(n);
    // Two sends of 8 MiB overlapping for 100 ms in all: 16 MiB in 0.1 s, 168 MB/s.
    links.begin_at("a", ms(0));
    links.begin_at("a", ms(50));
    links.end_at("a", 8 << 20, ms(80));
    links.end_at("a", 8 << 20, ms(100));
    let rate = links.rate("a").unwrap();
    assert!((rate - 167.77e6).abs() < 1e5, "{rate}");
    assert_eq!(links.codec(Compress::Auto, Some("a")), Codec::Zstd);
    // An idle gap does not count: another 16 MiB in 20 ms, a second later (280 MB/s: still
    // slow).
    links.begin_at("a", ms(1100));
    links.end_at("a", 16 << 20, ms(1120));
    assert!((links.rate("a").unwrap() - 279.6e6).abs() < 1e5);
    assert_eq!(links.codec(Compress::Auto, Some("a")), Codec::Zstd);
    // A link not measured yet gets zstd, a fast one raw; fixed choices are kept.
    links.begin_at("b", ms(0));
    links.end_at("b", 1 << 20, ms(1));
    assert_eq!(links.rate("b"), None, "1 MiB tells nothing yet");
    assert_eq!(links.codec(Compress::Auto, Some("b")), Codec::Zstd);
    assert_eq!(links.codec(Compress::Auto, None), Codec::Zstd);
    links.begin_at("b", ms(200));
    links.end_at("b", 15 << 20, ms(220));
    assert_eq!(links.codec(Compress::Auto, Some("b")), Codec::Raw, "16 MiB in 21 ms");
    assert_eq!(links.codec(Compress::Lz4, Some("a")), Codec::Lz4);
    assert_eq!(links.codec(Compress::None, Some("a")), Codec::Raw);
    // A worker on this machine gets raw messages unmeasured; only a fixed choice overrides.
    for local in ["http://127.0.0.1:7001", "https://127.8.0.3:9", "http://[::1]:7001", "http://localhost:80"]
    {
        assert!(is_loopback(local), "{local}");
        assert_eq!(links.codec(Compress::Auto, Some(local)), Codec::Raw, "{local}");
        assert_eq!(links.codec(Compress::Zstd, Some(local)), Codec::Zstd);
    }
    for remote in ["http://10.0.0.2:7001", "https://[fe80::1]:9", "http://node7:7001", "a"] {
        assert!(!is_loopback(remote), "{remote}");
    }
    // An end without a begin changes nothing.
    links.end_at("c", 1 << 30, ms(5));
    assert_eq!(links.rate("c"), None);
}

#[test]
fn rows_belong_to_their_job_and_fetched_ones_give_way_to_the_budget() {
    let kept = Kept::default();
    let set = |c: u32| ColumnSet::from_sorted(&[c], H11_COLUMNS);
    kept.keep(7, 1, [(3, set(1)), (4, set(2))]);
    assert_eq!(kept.get(7, 1, 3).unwrap().to_vec(), [1]);
    assert!(kept.get(8, 1, 3).is_none() && kept.get(7, 2, 3).is_none());
    assert!(kept.own_rows(7, 1, &[3, 4]).is_some() && kept.own_rows(7, 1, &[3, 5]).is_none());
    let own = (set(1).bytes() + set(2).bytes()) as u64;
    let fetched = vec![(9, Arc::new(set(5)))];
    kept.remember(7, 0, &fetched, own + 1000);
    assert_eq!(kept.get(7, 0, 9).unwrap().to_vec(), [5]);
    kept.remember(7, 0, &[(10, Arc::new(set(6)))], own + 1);
    assert!(kept.get(7, 0, 9).is_none() && kept.get(7, 0, 10).is_none(), "over budget");
    assert!(kept.get(7, 1, 4).is_some(), "own rows stay");
    kept.keep(8, 1, [(0, set(0))]);
    assert!(kept.get(7, 1, 3).is_none(), "a new job drops the old one's rows");
}

#[test]
fn a_message_is_its_chunks_joined_and_one_chunk_is_not_copied() {
    let message: Bytes =
        (0..(2 * MAX_CHUNK_BYTES + 5) as u32).map(|i| (i % 251) as u8).collect::<Vec<_>>().into();
    let meta = Meta { job: 1, epoch: 2, level: 3, from: 4, part: 5, kind: PeerKind::Images };
    let chunks = meta.chunks(message.clone());
    assert_eq!(chunks.len(), 3);
    assert!(chunks.iter().all(|c| Meta::of(c).ok() == Some(meta)));
    assert_eq!(chunks.iter().map(|c| c.last).collect::<Vec<_>>(), [false, false, true]);
    assert!(chunks.iter().all(|c| c.total == message.len() as u64), "every chunk names the length");
    // The chunks are slices of the message, not copies.
    assert_eq!(chunks[1].data.as_ptr(), message[MAX_CHUNK_BYTES..].as_ptr());
    let mut joined = Joined::default();
    assert!(joined.is_empty());
    for c in &chunks {
        assert_eq!(joined.len() as u64, c.offset);
        joined.push(c.data.clone(), c.total as usize);
    }
    assert_eq!(joined.into_bytes(), message);
    // A sender that does not name the length (0) gets the same message.
    let mut unnamed = Joined::default();
    chunks.iter().for_each(|c| unnamed.push(c.data.clone(), 0));
    assert_eq!(unnamed.into_bytes(), message);
    let short = message.slice(..100);
    let mut one = Joined::default();
    one.push(short.clone(), short.len());
    assert_eq!(one.into_bytes().as_ptr(), short.as_ptr(), "one chunk is handed on as it came");
    assert_eq!(Joined::default().into_bytes(), Bytes::new());
    assert_eq!(meta.chunks(Bytes::new()).len(), 1, "an empty message is one empty chunk");
}
