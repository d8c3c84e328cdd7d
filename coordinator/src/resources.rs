//! What a job needs against what the machine has: refuse before starting, with numbers, rather
//! than fail (or swap) hours in.

use anyhow::{bail, Result};
use std::path::Path;

/// Bytes of memory the kernel reports as available for new allocations (`MemAvailable`).
pub fn memory_available() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// Bytes of memory the machine has (`MemTotal`), or its control group's limit when less:
/// unlike what is available, the same from run to run, so choices made from it (a product
/// job's parts) are too.
pub fn memory_total() -> Option<u64> {
    Some(shared::units::memory_limit_bytes()).filter(|&m| m > 0)
}

fn meminfo(field: &str) -> Option<u64> {
    shared::units::proc_kib_field("/proc/meminfo", field)
}

/// Free bytes on the filesystem holding `path`, for an unprivileged writer.
pub fn disk_available(path: &Path) -> Option<u64> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a valid NUL-terminated path and `st` points to writable memory of the
    // right type; statvfs only writes it, and we read it only when it reports success.
    let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled the struct.
    let st = unsafe { st.assume_init() };
    // The field types differ between platforms (u32 on some 32-bit targets).
    #[allow(clippy::unnecessary_cast)]
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

pub use shared::units::{gib, parse_size};

/// Refuses a job whose memory (and, with a state directory, disk) needs exceed what is
/// available or the user's limit.
pub fn check(
    memory_needed: u64,
    disk_needed: u64,
    state_dir: Option<&Path>,
    mem_limit: Option<u64>,
) -> Result<()> {
    let hint = if state_dir.is_none() && disk_needed == 0 {
        "; --state-dir DIR keeps the bit arrays on disk"
    } else {
        ""
    };
    check_memory(memory_needed, mem_limit, hint)?;
    if let (Some(dir), true) = (state_dir, disk_needed > 0) {
        if let Some(avail) = disk_available(dir) {
            if disk_needed > avail {
                bail!(
                    "this job needs {} of disk in {} but only {} is free",
                    gib(disk_needed),
                    dir.display(),
                    gib(avail)
                );
            }
        }
    }
    Ok(())
}

/// Refuses a job that needs more memory than is available or than `mem_limit`; `hint` ends the
/// message about the limit.
pub fn check_memory(memory_needed: u64, mem_limit: Option<u64>, hint: &str) -> Result<()> {
    if let Some(limit) = mem_limit {
        if memory_needed > limit {
            bail!(
                "this job needs about {} of memory, over --mem-limit {}{hint}",
                gib(memory_needed),
                gib(limit)
            );
        }
    }
    if let Some(avail) = memory_available() {
        if memory_needed > avail {
            bail!(
                "this job needs about {} of memory but only {} is available",
                gib(memory_needed),
                gib(avail)
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_the_limit_is_refused_with_numbers() {
        let err = check(20 << 30, 0, None, Some(10 << 30)).unwrap_err().to_string();
        assert!(err.contains("20.0 GiB") && err.contains("10.0 GiB"), "{err}");
        assert!(check(1 << 20, 0, None, Some(10 << 30)).is_ok());
    }
}
