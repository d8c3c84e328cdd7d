//! Byte sizes as users write them (`--mem-limit 3G`) and as messages print them.

/// A field of a Linux `/proc` file given in kB (`VmHWM:` of `/proc/self/status`, `MemTotal:`
/// of `/proc/meminfo`), in bytes; `None` where the file or the field is missing.
pub fn proc_kib_field(path: &str, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Text that is not a byte size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a size: {0:?} (expected e.g. 10G, 512M or a byte count)")]
pub struct BadSize(pub String);

/// Parses a byte size: a number with an optional K, M, G or T suffix (powers of 1024), e.g.
/// `10G`, `512M`, `1073741824`.
pub fn parse_size(text: &str) -> Result<u64, BadSize> {
    let t = text.trim();
    let (digits, shift) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        Some('T') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let value: f64 = digits.trim().parse().map_err(|_| BadSize(text.to_string()))?;
    if !(value.is_finite() && value >= 0.0) {
        return Err(BadSize(text.to_string()));
    }
    Ok((value * (1u64 << shift) as f64) as u64)
}

/// A byte count for messages: KiB below a MiB, MiB below a GiB, else GiB.
pub fn gib(bytes: u64) -> String {
    if bytes < 1 << 20 {
        return format!("{:.1} KiB", bytes as f64 / 1024.0);
    }
    if bytes < 1 << 30 {
        return format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64);
    }
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn proc_fields_read_in_bytes() {
        let total = proc_kib_field("/proc/meminfo", "MemTotal:").expect("MemTotal on Linux");
        assert!(total > 1 << 20 && total.is_multiple_of(1024), "{total}");
        assert_eq!(proc_kib_field("/proc/meminfo", "NoSuchField:"), None);
        assert_eq!(proc_kib_field("/nonexistent/file", "MemTotal:"), None);
    }

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("10G"), Ok(10 << 30));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert!(parse_size("ten").is_err());
        assert!(parse_size("-1G").is_err());
    }

    #[test]
    fn sizes_print_in_a_fitting_unit() {
        assert_eq!(gib(1024), "1.0 KiB");
        assert_eq!(gib(3 << 20), "3.0 MiB");
        assert_eq!(gib(5 << 30), "5.0 GiB");
    }
}
