use super::*;

const KEY: ShardKey = ShardKey { job: 7, task: 42, attempt: 2, level: 11 };

#[test]
fn round_trip_and_compression() {
    let payload: Vec<u8> = (0..100_000u32).map(|i| if i % 97 == 0 { 0xff } else { 0 }).collect();
    let shard = encode(KEY, &payload);
    assert!(shard.len() < payload.len() / 10, "sparse bits compress: {} bytes", shard.len());
    assert_eq!(decode(&shard), Ok((KEY, payload.clone())));
    assert_eq!(decode_for(&shard, KEY), Ok(payload));
    assert!(matches!(decode_for(&shard, ShardKey { attempt: 3, ..KEY }), Err(ShardError::WrongTask { .. })));
    assert_eq!(decode(&encode(KEY, &[])), Ok((KEY, vec![])));
}

#[test]
fn words_round_trip_in_place() {
    let words: Vec<u64> = (0..5000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 64)).collect();
    let shard = encode_words(KEY, &words);
    assert_eq!(decode_words_for(&shard, KEY, 5000), Ok(words.clone()));
    assert_eq!(decode_words_for(&shard, KEY, 6000), Ok(words.clone()));
    assert!(matches!(decode_words_for(&shard, KEY, 4999), Err(ShardError::TooLarge { .. })));
    // Into a reused buffer, longer and holding other words, or shorter.
    assert_eq!(decode_words_into(&shard, KEY, 5000, vec![u64::MAX; 9000]), Ok(words.clone()));
    assert_eq!(decode_words_into(&shard, KEY, 5000, vec![1; 10]), Ok(words.clone()));
    let parts = [&words[..10], &[], &words[10..]].map(WordPart::plain);
    assert_eq!(decode_words_for(&encode_word_parts(KEY, &parts), KEY, 5000), Ok(words.clone()));
    // Several frames (groups of 2 Mi words), decoded in one stream and in pieces.
    let big: Vec<u64> = (0..5_000_000u64).map(|i| i * i).collect();
    let halves: Vec<WordPart> = big.chunks(1_500_000).map(WordPart::plain).collect();
    let framed = encode_word_parts(KEY, &halves);
    assert_eq!(decode_words_for(&framed, KEY, big.len()).as_deref(), Ok(&big[..]));
    let mut d = WordsDecoder::new(KEY, big.len());
    for piece in framed.chunks(1 << 20) {
        d.push(piece).unwrap();
    }
    assert_eq!(d.finish().as_deref(), Ok(&big[..]));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(decode_for(&shard, KEY), Ok(bytes));
    assert!(matches!(decode_words_for(&encode(KEY, b"odd"), KEY, 1), Err(ShardError::Decompress(_))));
    // Fed in pieces of every size, as a download arrives.
    for piece in [1, 7, 64, 1000] {
        let mut d = WordsDecoder::new(KEY, 5000);
        for part in shard.chunks(piece) {
            d.push(part).unwrap();
        }
        assert_eq!(d.finish(), Ok(words.clone()), "pieces of {piece}");
    }
    // A truncated or corrupted stream is refused at the end at the latest.
    let mut d = WordsDecoder::new(KEY, 5000);
    d.push(&shard[..shard.len() - 3]).unwrap();
    assert!(d.finish().is_err());
    for at in [0, 30, shard.len() / 2, shard.len() - 1] {
        let mut bad = shard.clone();
        bad[at] ^= 4;
        let mut d = WordsDecoder::new(KEY, 5000);
        let result = d.push(&bad).and_then(|()| d.finish().map(|_| ()));
        assert!(result.is_err(), "flip at {at} accepted");
    }
}

#[test]
fn every_codec_round_trips_in_pieces_and_refuses_damage() {
    let words: Vec<u64> = (0..300_000u64).map(|i| if i % 5 == 0 { i * 0x9E37 } else { 0 }).collect();
    let parts = [&words[..1000], &words[1000..]].map(WordPart::plain);
    for codec in [Codec::Raw, Codec::Lz4, Codec::Zstd] {
        let shard = encode_word_parts_with(KEY, codec, &parts);
        assert!(shard.len() as u64 <= max_shard_bytes(words.len()), "{codec:?}");
        assert_eq!(decode_words_for(&shard, KEY, words.len()).as_deref(), Ok(&words[..]), "{codec:?}");
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(decode_for(&shard, KEY), Ok(bytes), "{codec:?}");
        for piece in [1, 999, 1 << 16] {
            let mut d = WordsDecoder::new(KEY, words.len());
            shard.chunks(piece).for_each(|p| d.push(p).unwrap());
            assert_eq!(d.finish().as_deref(), Ok(&words[..]), "{codec:?} in pieces of {piece}");
        }
        for at in [0, 20, shard.len() / 2, shard.len() - 1] {
            let mut bad = shard.clone();
            bad[at] ^= 0x10;
            assert!(decode_words_for(&bad, KEY, words.len()).is_err(), "{codec:?}: flip at {at}");
        }
        assert!(decode_words_for(&shard[..shard.len() - 1], KEY, words.len()).is_err());
    }
    // Raw is the words; LZ4 and zstd are shorter on sparse words.
    let size = |c| encode_word_parts_with(KEY, c, &parts).len();
    assert_eq!(size(Codec::Raw), header_len() + words.len() * 8);
    assert!(size(Codec::Zstd) < size(Codec::Lz4) && size(Codec::Lz4) < size(Codec::Raw) / 3);
    // A codec this build does not know is named.
    let shard = encode_words(KEY, &words[..10]);
    let (header, payload) = checked(&shard).unwrap();
    let mut other = encode_header(&Header { codec: 9, ..header });
    other.extend_from_slice(payload);
    assert_eq!(decode(&other), Err(ShardError::UnknownCodec(9)));
}

#[test]
fn sizes_beyond_the_task_are_refused_before_allocating() {
    // A header claiming 2^40 raw bytes (8 TiB) must be refused from the header alone.
    let shard = encode_words(KEY, &[1, 2, 3]);
    let hl = header_len();
    let (header, payload) = checked(&shard).unwrap();
    let mut forged = encode_header(&Header { raw_len: 1 << 40, ..header });
    forged.extend_from_slice(payload);
    let limit = 1000 * 8;
    assert_eq!(decode_words_for(&forged, KEY, 1000), Err(ShardError::TooLarge { claimed: 1 << 40, limit }));
    // So is a payload longer than zstd's worst case for the most words the task can return.
    let long = encode_header(&Header { payload_len: 1 << 40, ..header });
    assert!(matches!(decode_words_for(&long, KEY, 1000), Err(ShardError::TooLarge { .. })));
    // And a result larger than the task's limit, honestly encoded.
    let big = encode_words(KEY, &vec![7u64; 1001]);
    assert!(matches!(decode_words_for(&big, KEY, 1000), Err(ShardError::TooLarge { .. })));
    assert_eq!(decode_words_for(&big, KEY, 1001), Ok(vec![7u64; 1001]));
    assert!(shard.len() as u64 <= max_shard_bytes(3) && hl < shard.len());
}

#[test]
fn every_single_bit_flip_is_rejected() {
    let shard = encode(KEY, b"some bits of a frontier row, some bits of a frontier row");
    for i in 0..shard.len() {
        for bit in 0..8 {
            let mut bad = shard.clone();
            bad[i] ^= 1 << bit;
            assert!(decode(&bad).is_err(), "flip of byte {i} bit {bit} accepted");
        }
    }
    assert!(matches!(decode(&shard[..shard.len() - 1]), Err(ShardError::PayloadLength { .. })));
    assert!(matches!(decode(&shard[..10]), Err(ShardError::Truncated { .. })));
}

#[test]
fn a_raw_shard_written_in_place_is_the_raw_encoding_and_reads_back() {
    let key = KEY;
    for n in [0usize, 1, 5, 1000] {
        let words: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        let expected = encode_word_parts_with(key, Codec::Raw, &[WordPart::plain(&words)]);
        // Its header written in front of its payload, in a buffer of any alignment.
        let mut shard = vec![0xa5u8; raw_header_len()];
        words.iter().for_each(|w| shard.extend_from_slice(&w.to_le_bytes()));
        let (header, payload) = shard.split_at_mut(raw_header_len());
        raw_header_into(key, payload, header);
        assert_eq!(shard, expected);
        assert_eq!(decode_words_for(&shard, key, n), Ok(words.clone()));
        assert_eq!(raw_words_for(&shard, key, n), Ok(Some(&shard[raw_header_len()..])));
        if n > 0 {
            let shorter = raw_words_for(&shard, key, n - 1);
            assert!(matches!(shorter, Err(ShardError::TooLarge { .. })), "{shorter:?}");
        }
        // Framed in one buffer behind room for its header: the same bytes.
        let mut framed = vec![u64::MAX; raw_head_words()];
        framed.extend(&words);
        assert_eq!(&raw_bytes(key, framed)[..], &expected[..]);
    }
}
