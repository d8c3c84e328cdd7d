//! Byte sizes as users write them (`--mem-limit 3G`) and as messages print them, and the
//! memory this process has (the machine's, its control group's limit).

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

/// The memory this process may use: the machine's, or less when its control group (a Slurm
/// step, a container) is limited to less; 0 where unknown.
pub fn memory_limit_bytes() -> u64 {
    let physical = proc_kib_field("/proc/meminfo", "MemTotal:").unwrap_or(0);
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|groups| cgroup_limit(&groups, |path| std::fs::read_to_string(path).ok()));
    match cgroup {
        Some(limit) if physical == 0 || limit < physical => limit,
        _ => physical,
    }
}

/// The tightest memory limit on the control group that `/proc/self/cgroup` (`groups`) names,
/// or on any group above it, read through `read` (cgroup v2's `memory.max`, v1's
/// `memory.limit_in_bytes`); `None` when none is set.
fn cgroup_limit(groups: &str, read: impl Fn(&str) -> Option<String>) -> Option<u64> {
    let mut tightest: Option<u64> = None;
    let mut note = |text: Option<String>| {
        // "max" (v2) or a huge number (v1: no limit) are not limits.
        if let Some(limit) = text.and_then(|t| t.trim().parse::<u64>().ok()).filter(|&l| l < 1 << 60) {
            tightest = Some(tightest.map_or(limit, |t| t.min(limit)));
        }
    };
    for line in groups.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) =
            (fields.next(), fields.next().unwrap_or(""), fields.next().unwrap_or(""));
        let (root, file) = if controllers.is_empty() {
            ("/sys/fs/cgroup", "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
        } else {
            continue;
        };
        // The group and each group above it, up to the root.
        let mut dir = path.trim_end_matches('/').to_string();
        loop {
            note(read(&format!("{root}{dir}/{file}")));
            match dir.rfind('/') {
                Some(i) => dir.truncate(i),
                None => break,
            }
            if dir.is_empty() {
                note(read(&format!("{root}/{file}")));
                break;
            }
        }
    }
    tightest
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

    #[test]
    fn the_tightest_limit_of_the_group_and_its_parents_counts() {
        let files = |pairs: &'static [(&'static str, &'static str)]| {
            move |path: &str| pairs.iter().find(|(p, _)| *p == path).map(|(_, v)| v.to_string())
        };
        // cgroup v2: a Slurm step limited to 4 GiB under a job limited to 8 GiB.
        let v2 = files(&[
            ("/sys/fs/cgroup/slurm/job_7/step_0/memory.max", "4294967296\n"),
            ("/sys/fs/cgroup/slurm/job_7/memory.max", "8589934592\n"),
            ("/sys/fs/cgroup/slurm/memory.max", "max\n"),
        ]);
        assert_eq!(cgroup_limit("0::/slurm/job_7/step_0\n", v2), Some(4 << 30));
        assert_eq!(cgroup_limit("0::/slurm\n", v2), None, "max is no limit");
        // cgroup v1: the memory controller's line; v1's "no limit" is a huge number.
        let v1 = files(&[
            ("/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "3221225472"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712"),
        ]);
        let groups = "12:cpu,cpuacct:/docker/abc\n7:memory:/docker/abc\n";
        assert_eq!(cgroup_limit(groups, v1), Some(3 << 30));
        // The root group, or no group file at all.
        assert_eq!(
            cgroup_limit("0::/\n", files(&[("/sys/fs/cgroup/memory.max", "1073741824")])),
            Some(1 << 30)
        );
        assert_eq!(cgroup_limit("0::/x\n", files(&[])), None);
    }
}
