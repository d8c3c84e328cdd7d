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
    /// Raw to a worker on this machine (a loopback address: the link is a copy in memory),
    /// and on links measured at [`FAST_LINK`] bytes a second or more; zstd on slower ones and
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

    /// [`Links::begin`] at a given instant (the clock as an input, so that rates can be tested).
    pub fn begin_at(&self, address: &str, now: Instant) {
        if let Ok(mut rates) = self.rates.lock() {
            let r = rates.entry(address.to_string()).or_default();
            if r.in_flight == 0 {
                r.busy_since = Some(now);
            }
            r.in_flight += 1;
        }
    }

    /// [`Links::end`] at a given instant.
    pub fn end_at(&self, address: &str, bytes: u64, now: Instant) {
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
            Compress::Auto if address.is_some_and(is_loopback) => Codec::Raw,
            Compress::Auto => match address.and_then(|a| self.rate(a)) {
                Some(rate) if rate >= FAST_LINK => Codec::Raw,
                _ => Codec::Zstd,
            },
        }
    }
}

/// Whether a worker's address (`http://host:port`, `https://...`) names this machine: a
/// loopback IP address or `localhost`. Its rate, measured on the messages, is bound by the
/// two ends' scheduling rather than by a link (docs/distribution.md, "What a byte costs"), so
/// it is not measured.
pub fn is_loopback(address: &str) -> bool {
    let rest = address.split_once("://").map_or(address, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}
