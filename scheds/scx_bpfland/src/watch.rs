//! `--watch-pid`: prints the class the BPF side gave to chosen tasks, read from the task
//! storage map through a pidfd (the key such maps take from userspace).

use crate::intf::task_ctx;
use scxkit_runtime::maps::{from_bytes, PlainC};
use anyhow::{Context, Result};
use libbpf_rs::{MapCore, MapFlags};
use std::os::fd::{FromRawFd, OwnedFd, AsRawFd};

// SAFETY: bindgen's twin of intf.h's task_ctx: integers only.
unsafe impl PlainC for task_ctx {}

pub struct Watch {
    tasks: Vec<(i32, OwnedFd)>,
}

impl Watch {
    pub fn new(pids: &[i32]) -> Result<Watch> {
        let tasks = pids
            .iter()
            .map(|&pid| pidfd_open(pid).with_context(|| format!("--watch-pid {pid}")).map(|fd| (pid, fd)))
            .collect::<Result<_>>()?;
        Ok(Watch { tasks })
    }

    /// Logs one line per watched task.
    pub fn report(&self, task_ctxs: &dyn MapCore) {
        for (pid, fd) in &self.tasks {
            let key = fd.as_raw_fd().to_ne_bytes();
            match task_ctxs.lookup(&key, MapFlags::ANY).map(|value| value.and_then(|bytes| from_bytes::<task_ctx>(&bytes))) {
                Ok(Some(ctx)) => log::info!("{}", describe(*pid, &ctx)),
                Ok(None) => log::info!("pid {pid}: not known to the scheduler"),
                Err(e) => log::info!("pid {pid}: gone ({e})"),
            }
        }
    }
}

fn describe(pid: i32, ctx: &task_ctx) -> String {
    let class = if ctx.interactive != 0 { "interactive" } else { "regular" };
    format!(
        "pid {pid}: {class} ({} voluntary switches/s, next slice {} us, ran {} ms)",
        ctx.nvcsw_rate,
        ctx.slice_ns / 1000,
        ctx.runtime_ns / 1_000_000
    )
}

fn pidfd_open(pid: i32) -> Result<OwnedFd> {
    // SAFETY: a plain syscall; the returned descriptor is owned by the OwnedFd below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()).context("no such process");
    }
    // SAFETY: fd is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_the_class() {
        let ctx = task_ctx { interactive: 1, nvcsw_rate: 57, slice_ns: 20_000_000, runtime_ns: 1_500_000_000, ..Default::default() };
        assert_eq!(describe(7, &ctx), "pid 7: interactive (57 voluntary switches/s, next slice 20000 us, ran 1500 ms)");
        let hog = task_ctx { nvcsw_rate: 0, ..Default::default() };
        assert!(describe(8, &hog).contains("regular"));
    }

    #[test]
    fn an_unknown_pid_is_refused() {
        assert!(Watch::new(&[i32::MAX]).is_err());
    }
}
