//! How fast each link to another worker carries bytes, and so how a row search's messages to
//! it are packed (`--compress`): raw where the link is faster than compressing pays for,
//! zstd where it is slow. The rate is measured on the messages themselves: the bytes sent
//! over the time at least one send to that worker was in flight, so that sends overlapping
//! each other are not each counted at a fraction of the link.

use shared::shard::Codec;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What `--compress` asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Compress {
    /// Raw on links measured at [`FAST_LINK`] bytes a second or more, zstd on slower ones and
    /// on links not measured yet (until they have carried [`MEASURED_AFTER`] bytes): a link of
    /// unknown speed gets the fewest bytes.
    #[default]
    Auto,
    /// Never compress (the bytes as the density coding leaves them).
    None,
    /// LZ4 on every link.
    Lz4,
    /// zstd (level 1) on every link.
    Zstd,
}

/// A link this fast or faster carries raw messages sooner than zstd packs and unpacks them:
/// zstd costs about 2.4 ns of CPU a raw byte on the two ends together and removed 88 % of
/// `h`'s message bytes, which pays only where a byte takes more than 2.4 / 0.88 = 2.7 ns of
/// link time, below about 370 MB/s; rounded down (docs/distribution.md, "What a byte costs",
/// has the measurements).
pub const FAST_LINK: f64 = 350e6;

/// Bytes a link carries before its rate is trusted (short messages measure latency, not
/// bandwidth).
pub const MEASURED_AFTER: u64 = 8 << 20;

#[derive(Default)]
struct Rate {
    in_flight: u32,
    busy_since: Option<Instant>,
    busy: Duration,
    bytes: u64,
}

/// The measured rate of each link, by the other worker's address.
#[derive(Default)]
pub struct Links {
    rates: Mutex<HashMap<String, Rate>>,
}

impl Links {
    /// A send of `address` begins.
    pub fn begin(&self, address: &str) {
        self.begin_at(address, Instant::now());
    }

    /// A send of `bytes` to `address` ended (delivered or not).
    pub fn end(&self, address: &str, bytes: u64) {
        self.end_at(address, bytes, Instant::now());
    }

    fn begin_at(&self, address: &str, now: Instant) {
        if let Ok(mut rates) = self.rates.lock() {
            let r = rates.entry(address.to_string()).or_default();
            if r.in_flight == 0 {
                r.busy_since = Some(now);
            }
            r.in_flight += 1;
        }
    }

    fn end_at(&self, address: &str, bytes: u64, now: Instant) {
        if let Ok(mut rates) = self.rates.lock() {
            let Some(r) = rates.get_mut(address).filter(|r| r.in_flight > 0) else { return };
            r.bytes += bytes;
            r.in_flight -= 1;
            if r.in_flight == 0 {
                if let Some(since) = r.busy_since.take() {
                    r.busy += now.saturating_duration_since(since);
                }
            }
        }
    }

    /// Bytes a second the link to `address` carried, once it carried enough to tell.
    pub fn rate(&self, address: &str) -> Option<f64> {
        let rates = self.rates.lock().ok()?;
        let r = rates.get(address)?;
        (r.bytes >= MEASURED_AFTER && !r.busy.is_zero()).then(|| r.bytes as f64 / r.busy.as_secs_f64())
    }

    /// How a message to `address` is packed under `compress`.
    pub fn codec(&self, compress: Compress, address: Option<&str>) -> Codec {
        match compress {
            Compress::None => Codec::Raw,
            Compress::Lz4 => Codec::Lz4,
            Compress::Zstd => Codec::Zstd,
            Compress::Auto => match address.and_then(|a| self.rate(a)) {
                Some(rate) if rate >= FAST_LINK => Codec::Raw,
                _ => Codec::Zstd,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_sends_count_the_link_once_and_slow_links_get_zstd() {
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
        // An end without a begin changes nothing.
        links.end_at("c", 1 << 30, ms(5));
        assert_eq!(links.rate("c"), None);
    }
}
