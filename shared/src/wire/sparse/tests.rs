use super::*;

/// A part of 10 rows of 2 words (100 columns): empty rows, sparse rows (sent as
/// positions: fewer than a word's worth) and dense ones.
fn part() -> Vec<u64> {
    (0..20u64)
        .map(|i| match i % 5 {
            0 => 0,
            1 => 1 << (i % 64),
            _ => i.wrapping_mul(0x9e37_79b9_7f4a_7c15) & 0xf_ffff_ffff,
        })
        .collect()
}

const KEY: ShardKey = ShardKey { job: 9, task: 2, attempt: 0, level: 5 };

#[test]
fn messages_read_back_with_only_the_rows_kept_whatever_the_codec() {
    let full = part();
    for codec in [Codec::Raw, Codec::Lz4, Codec::Zstd] {
        let message = |keep: &(dyn Fn(usize) -> bool + Sync)| {
            let bytes = SparseRows::encode_rows(KEY, &full, 2, keep, codec);
            SparseRows::decode_rows(&bytes, KEY, 10, 2).unwrap().to_rows()
        };
        let (all, even) = (message(&|_| true), message(&|i| i % 2 == 0));
        assert_eq!(all, full, "{codec:?}");
        for r in 0..10 {
            let want: &[u64] = if r % 2 == 0 { &full[r * 2..][..2] } else { &[0, 0] };
            assert_eq!(&even[r * 2..][..2], want, "row {r} ({codec:?})");
        }
    }
}

#[test]
fn coding_that_clears_gives_the_same_bytes_and_zeroes_only_the_rows_kept() {
    let full = part();
    for codec in [Codec::Raw, Codec::Zstd] {
        for keep in [&(|_| true) as &(dyn Fn(usize) -> bool + Sync), &|i| i % 3 != 1] {
            let mut cleared = full.clone();
            let bytes = SparseRows::encode_rows_clearing(KEY, &mut cleared, 2, keep, codec);
            assert_eq!(bytes, SparseRows::encode_rows(KEY, &full, 2, keep, codec), "{codec:?}");
            for r in 0..10 {
                let want: &[u64] = if keep(r) { &[0, 0] } else { &full[r * 2..][..2] };
                assert_eq!(&cleared[r * 2..][..2], want, "row {r} ({codec:?})");
            }
        }
    }
}

#[test]
fn raw_messages_are_read_where_they_lie_at_any_alignment() {
    let full = part();
    let bytes = SparseRows::encode_rows(KEY, &full, 2, &|_| true, Codec::Raw);
    for offset in 0..8 {
        // The message at every alignment within a larger buffer, as gRPC's may hold it.
        let mut held = vec![0xa5u8; offset];
        held.extend_from_slice(&bytes);
        let buffer = vec![7u64; 33];
        let set = SparseRows::decode_rows_into(&held[offset..], KEY, 10, 2, buffer).unwrap();
        assert!(matches!(set.payload, Payload::InPlace(..)), "offset {offset}");
        assert_eq!(
            (set.entries(), set.to_rows()),
            (full.iter().map(|w| w.count_ones() as u64).sum(), full.clone())
        );
        assert_eq!(set.into_words(), vec![7u64; 33], "the unused buffer comes back");
    }
    // Packed messages are decoded into the buffer.
    let packed = SparseRows::encode_rows(KEY, &full, 2, &|_| true, Codec::Lz4);
    let set = SparseRows::decode_rows_into(&packed, KEY, 10, 2, Vec::new()).unwrap();
    assert!(matches!(set.payload, Payload::Decoded(_)));
    assert_eq!(set.to_rows(), full);
}

#[test]
fn a_kept_level_is_the_raw_message_of_all_its_rows() {
    let full = part();
    let counts = full.chunks(2).map(|row| row.iter().map(|w| w.count_ones()).sum()).collect();
    let mut level = SparseRows::kept_level(KEY, &full, 2, counts);
    // Written where a store would put it: behind bytes it leaves alone, at an odd offset.
    let mut out = vec![0xa5u8; level.len() + 3];
    level.write(&mut out[3..]);
    let message = SparseRows::encode_rows(KEY, &full, 2, &|_| true, Codec::Raw);
    assert_eq!(&out[3..], &message[..]);
    assert_eq!(&out[..3], &[0xa5; 3]);
    assert_eq!(SparseRows::decode_rows(&out[3..], KEY, 10, 2).unwrap().to_rows(), full);
}

#[test]
fn sparse_rows_travel_as_positions_and_dense_rows_raw() {
    // 630 words a row (the rows of H): one entry in a row takes 2 words, not 630.
    let w = 630;
    let mut full = vec![0u64; 3 * w];
    full[w + 17] = 1 << 5; // row 1: one entry
    full[2 * w..].iter_mut().for_each(|x| *x = 0x5555_5555_5555_5555); // row 2: dense
    let bytes = SparseRows::encode_rows(KEY, &full, w, &|_| true, Codec::Raw);
    let set = SparseRows::decode_rows(&bytes, KEY, 3, w).unwrap();
    assert_eq!(set.payload.words().len(), 2 + 2 + w + COUNTERS);
    assert_eq!(set.entries(), 1 + 32 * w as u64);
    assert_eq!(set.to_rows(), full);
    // ORed into rows that hold other entries, it adds its own.
    let mut dest = vec![0u64; 3 * w];
    dest[0] = 3;
    set.or_into(&mut dest);
    assert_eq!((dest[0], dest[w + 17], dest[2 * w]), (3, 1 << 5, 0x5555_5555_5555_5555));
}

#[test]
fn rows_wider_than_a_segment_travel_as_positions() {
    // The rows of H: 15,120 words, 967,680 columns in 15 segments, the last of 50,176.
    let w = 15_120;
    let mut full = vec![0u64; 2 * w];
    for c in [0usize, 65_535, 65_536, 7 * 65_536 + 4_001, 967_679] {
        full[c / 64] |= 1 << (c % 64);
    }
    full[w + 14_000] = 0xff; // row 1: 8 entries in segment 13
    let bytes = SparseRows::encode_rows(KEY, &full, w, &|_| true, Codec::Raw);
    let set = SparseRows::decode_rows(&bytes, KEY, 2, w).unwrap();
    // Row 0: a count word, then 15 counts and 5 columns (5 words); row 1: 1 + 6 words.
    assert_eq!(set.payload.words().len(), 2 + 6 + 7 + COUNTERS);
    assert_eq!((set.entries(), set.to_rows()), (13, full.clone()));
    // Compressed, the same rows go as bits.
    let bytes = SparseRows::encode_rows(KEY, &full, w, &|_| true, Codec::Zstd);
    let set = SparseRows::decode_rows(&bytes, KEY, 2, w).unwrap();
    assert_eq!(set.payload.words().len(), 2 + 2 * w + COUNTERS);
    assert_eq!((set.entries(), set.to_rows()), (13, full));
    // A column past the row's end in the last segment is refused.
    let mut payload = vec![1u64, 0, 1, 0, 0, 0, 1 << 32 | 50_176 << 48, 1];
    let forged = |p: &[u64]| {
        let bytes = shard::encode_word_parts_with(KEY, Codec::Raw, &[WordPart::plain(p)]);
        SparseRows::decode_rows(&bytes, KEY, 1, w).map(|s| s.to_rows())
    };
    assert!(forged(&payload).unwrap_err().0.contains("past its end"));
    payload[6] = 1 << 32 | 50_175 << 48;
    assert_eq!(forged(&payload).unwrap()[w - 1], 1 << 63);
}

#[test]
fn damaged_misrouted_oversized_or_malformed_messages_are_refused() {
    for codec in [Codec::Zstd, Codec::Raw] {
        let bytes = SparseRows::encode_rows(KEY, &part(), 2, &|_| true, codec);
        let other = ShardKey { level: 6, ..KEY };
        assert!(SparseRows::decode_rows(&bytes, other, 10, 2).is_err(), "another level's message");
        let mut damaged = bytes.to_vec();
        let last = damaged.len() - 3;
        damaged[last] ^= 1;
        assert!(SparseRows::decode_rows(&damaged, KEY, 10, 2).is_err(), "{codec:?}");
        assert!(SparseRows::decode_rows(&bytes[..bytes.len() - 8], KEY, 10, 2).is_err(), "cut short");
        // Read as a part of fewer rows, it holds more than such a part can.
        assert!(SparseRows::decode_rows(&bytes, KEY, 4, 2).is_err(), "{codec:?}");
    }
    // Well-checksummed payloads that lie: entries, lengths, columns, flags.
    // One row of `w` words.
    let forged_in = |payload: &[u64], w: usize| {
        let bytes = shard::encode_word_parts_with(KEY, Codec::Raw, &[WordPart::plain(payload)]);
        SparseRows::decode_rows(&bytes, KEY, 1, w).map(|_| ()).unwrap_err().0
    };
    let forged = |payload: &[u64]| forged_in(payload, 2);
    assert!(forged(&[1, 1, 1, 0, 2]).contains("reports 2 entries"));
    // A positions word: the count of the row's one segment, then the columns.
    let one_at = |c: u64| 1 | c << 16;
    assert!(forged_in(&[1, 0, 1, one_at(5), 9, 1], 8).contains("holds 2 words of rows"), "a word too many");
    assert!(forged_in(&[1, 0, 1, 2 | 5 << 16, 1], 8).contains("counts other than"));
    assert!(forged(&[1, 1, 1, 1]).contains("cut short"));
    assert!(forged(&[0, 1, 0]).contains("does not hold"));
    assert!(forged(&[2, 2, 0]).contains("past the end"));
    // A positions row in a row of 2 words: never sent so (it would not be shorter).
    assert!(forged(&[1, 0, 1, 3, 1]).contains("never sends"));
    let w = 8; // 512 columns; one position at column 600
    let mut p = vec![1, 0, 1, one_at(600), 1];
    let bytes = shard::encode_word_parts_with(KEY, Codec::Raw, &[WordPart::plain(&p)]);
    let err = SparseRows::decode_rows(&bytes, KEY, 1, w).map(|_| ()).unwrap_err();
    assert!(err.0.contains("past its end"), "{err}");
    p[3] = one_at(500);
    let bytes = shard::encode_word_parts_with(KEY, Codec::Raw, &[WordPart::plain(&p)]);
    assert_eq!(SparseRows::decode_rows(&bytes, KEY, 1, w).unwrap().to_rows()[7], 1 << 52);
}

#[test]
fn a_segments_columns_are_gathered_as_bit_by_bit() {
    // Words of 0 to 64 bits (past the four written without a branch), and a whole segment
    // whose last column is 65,535.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut cases: Vec<Vec<u64>> = vec![vec![], vec![0], vec![u64::MAX], vec![1 << 63; SEGMENT / 64]];
    for len in [1, 2, 7, 9, 64, SEGMENT / 64] {
        // Mostly empty words, then about 4, 16 and 48 bits a word.
        cases.push((0..len).map(|_| if next() % 5 == 0 { 1 << (next() % 64) } else { 0 }).collect());
        cases.push((0..len).map(|_| next() & next() & next() & next()).collect());
        cases.push((0..len).map(|_| next() & next()).collect());
        cases.push((0..len).map(|_| next() | next()).collect());
    }
    for words in cases {
        let want: Vec<u16> =
            (0..words.len() * 64).filter(|&c| words[c / 64] >> (c % 64) & 1 == 1).map(|c| c as u16).collect();
        // The processor's ways (VPCOMPRESSW where it has it, for dense and sparse rows) and
        // the scalar one.
        let dense = |w: &[u64], o: &mut [u16]| gather_columns(w, o, true);
        let sparse = |w: &[u64], o: &mut [u16]| gather_columns(w, o, false);
        type Gather<'a> = &'a dyn Fn(&[u64], &mut [u16]) -> usize;
        let ways: [(&str, Gather); 3] =
            [("dense", &dense), ("sparse", &sparse), ("scalar", &columns::portable)];
        for (way, gather) in ways {
            let mut out = vec![0xffffu16; words.len() * 64 + GATHER_ROOM];
            let n = gather(&words, &mut out);
            assert_eq!(&out[..n], &want[..], "{way}: {} words", words.len());
        }
    }
}
