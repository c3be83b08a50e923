//! CPU hotplug, as the runtime sees it: the kernel's hotplug sequence (an attach made with a
//! stale one is refused), waiting until no CPU is half-way on or offline before an attach,
//! noticing the events a scheduler follows by itself (`ops.cpu_online` / `ops.cpu_offline`),
//! and when one built without a CPU online now is due to be loaded again
//! (`Hotplug::RebuildsForNewCpus`).

use crate::spec::{Hotplug, REBUILD_AFTER_QUIET};
use crate::sysfs_state::{sched_ext_sysfs, SchedExtState};
use anyhow::{Context, Result};
use scxkit::Cpumask;
use log::{info, warn};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const CPU_SYSFS: &str = "/sys/devices/system/cpu";
/// How long an attach waits for CPU transitions under way to end before it goes on anyway
/// (the kernel then refuses a stale attach through the hotplug sequence).
const SETTLE_LIMIT: Duration = Duration::from_secs(10);
const SETTLE_POLL: Duration = Duration::from_millis(20);

/// The kernel's count of CPU on/offline events since boot.
pub fn read_hotplug_seq() -> Result<u64> {
    let file = sched_ext_sysfs().join("hotplug_seq");
    let text = fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    text.trim().parse().with_context(|| format!("{} holds '{}', not a number", file.display(), text.trim()))
}

/// The online CPUs as the kernel lists them, e.g. `0-2,5`.
pub fn online_cpu_list() -> String {
    fs::read_to_string(Path::new(CPU_SYSFS).join("online")).map(|s| s.trim().to_string()).unwrap_or_default()
}

/// CPUs whose hotplug state is not yet their target: a transition is under way.
fn cpus_in_transition(cpu_sysfs: &Path) -> Vec<u32> {
    let Ok(entries) = fs::read_dir(cpu_sysfs) else { return Vec::new() };
    let mut moving: Vec<u32> = entries
        .flatten()
        .filter_map(|e| {
            let cpu = e.file_name().to_str()?.strip_prefix("cpu")?.parse::<u32>().ok()?;
            in_transition(&e.path().join("hotplug")).then_some(cpu)
        })
        .collect();
    moving.sort_unstable();
    moving
}

fn in_transition(hotplug_dir: &Path) -> bool {
    let read = |name: &str| fs::read_to_string(hotplug_dir.join(name)).ok().map(|s| s.trim().to_string());
    match (read("state"), read("target")) {
        (Some(state), Some(target)) => state != target,
        _ => false,
    }
}

/// Waits until no CPU is going on or offline, at most [`SETTLE_LIMIT`]: attaching while the
/// kernel's hotplug machinery is half-way through a CPU only races with it.
pub fn wait_until_cpus_settle() {
    wait_until_settled(&PathBuf::from(CPU_SYSFS), SETTLE_LIMIT);
}

fn wait_until_settled(cpu_sysfs: &Path, limit: Duration) -> bool {
    let start = Instant::now();
    let mut moving = cpus_in_transition(cpu_sysfs);
    if moving.is_empty() {
        return true;
    }
    info!("waiting for CPUs {moving:?} to finish going on or offline before attaching");
    while !moving.is_empty() {
        if start.elapsed() >= limit {
            warn!("CPUs {moving:?} still going on or offline after {limit:?}; attaching anyway");
            return false;
        }
        std::thread::sleep(SETTLE_POLL);
        moving = cpus_in_transition(cpu_sysfs);
    }
    true
}

/// How many times a read of the machine's state is tried while CPUs keep going on or offline.
const READ_TRIES_WHILE_HOTPLUG: u32 = 20;

/// Reads the hotplug sequence, then what `read` reads (the topology), once no CPU is going
/// on or offline; again when a read fails while the sequence moved (a CPU's topology
/// directory vanishes as it goes offline, mid-read), at most [`READ_TRIES_WHILE_HOTPLUG`]
/// times. The kernel refuses an attach when the sequence moved after its first read.
pub fn read_between_events<T>(read: impl Fn() -> Result<T>) -> Result<(u64, T)> {
    read_between(read_hotplug_seq, read, wait_until_cpus_settle)
}

fn read_between<T>(seq: impl Fn() -> Result<u64>, read: impl Fn() -> Result<T>, settle: impl Fn()) -> Result<(u64, T)> {
    let mut tries = 0;
    loop {
        settle();
        tries += 1;
        let before = seq()?;
        match read() {
            Ok(value) => return Ok((before, value)),
            Err(e) if tries < READ_TRIES_WHILE_HOTPLUG && seq()? != before => {
                info!("CPUs went on or offline while reading ({e:#}); reading again");
            }
            Err(e) => return Err(e),
        }
    }
}

/// What the watch of an attached scheduler noticed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HotplugNews {
    Nothing,
    /// CPUs went on or offline (the new sequence number) and the scheduler stayed loaded.
    Followed(u64),
    /// A [`Hotplug::RebuildsForNewCpus`] scheduler is due to be loaded again for these
    /// online CPUs.
    Rebuild(String),
}

/// Notices, while a scheduler is attached, that CPUs went on or offline, and when one built
/// for the CPUs online at load should be built again.
pub struct HotplugWatch {
    mode: Hotplug,
    seq: u64,
    loaded_for: String,
    last_event: Instant,
}

impl HotplugWatch {
    /// `seq` and `loaded_for` (the online CPU list) as read before loading.
    pub fn new(mode: Hotplug, seq: u64, loaded_for: String) -> HotplugWatch {
        HotplugWatch { mode, seq, loaded_for, last_event: Instant::now() }
    }

    /// What happened since the last check (called every exit check of an attached scheduler).
    pub fn check(&mut self, now: Instant) -> HotplugNews {
        let Ok(seq) = read_hotplug_seq() else { return HotplugNews::Nothing };
        if seq != self.seq {
            // One the kernel is ejecting is not said to have followed.
            if !matches!(SchedExtState::read(&sched_ext_sysfs()), SchedExtState::Enabled { .. }) {
                return HotplugNews::Nothing;
            }
            self.seq = seq;
            self.last_event = now;
            return HotplugNews::Followed(seq);
        }
        if self.mode != Hotplug::RebuildsForNewCpus || now.duration_since(self.last_event) < REBUILD_AFTER_QUIET {
            return HotplugNews::Nothing;
        }
        let online = online_cpu_list();
        if rebuild_due(&self.loaded_for, &online, || cpus_in_transition(Path::new(CPU_SYSFS))) {
            HotplugNews::Rebuild(online)
        } else {
            HotplugNews::Nothing
        }
    }
}

/// Whether a scheduler loaded for the CPUs `loaded_for` must be loaded again, the CPUs
/// `online` being online now and `moving()` half-way on or offline: when a CPU online now
/// was not at load (it has no place in the scheduler's state), never mid-transition. CPUs
/// gone offline since are followed. `moving` reads two sysfs files per CPU, so it runs only
/// once such a CPU is online (this runs every exit check: at 1,024 CPUs, 20,000 reads a
/// second otherwise).
fn rebuild_due(loaded_for: &str, online: &str, moving: impl FnOnce() -> Vec<u32>) -> bool {
    online != loaded_for && has_cpu_not_in(online, loaded_for) && moving().is_empty()
}

/// Whether the CPU list `list` holds a CPU that `other` does not (an unreadable list: no).
fn has_cpu_not_in(list: &str, other: &str) -> bool {
    let nr_cpus = |text: &str| text.split([',', '-']).filter_map(|n| n.trim().parse::<usize>().ok()).max().map_or(0, |m| m + 1);
    let size = nr_cpus(list).max(nr_cpus(other));
    match (Cpumask::parse_list(list, size), Cpumask::parse_list(other, size)) {
        (Ok(list), Ok(other)) => !list.is_empty() && !list.is_subset_of(&other),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_cpu(root: &Path, cpu: u32, state: &str, target: &str) {
        let dir = root.join(format!("cpu{cpu}/hotplug"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("state"), format!("{state}\n")).unwrap();
        fs::write(dir.join("target"), format!("{target}\n")).unwrap();
    }

    fn temp_root(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("scxkit-hotplug-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        root
    }

    #[test]
    fn a_cpu_whose_state_is_not_its_target_is_in_transition() {
        let root = temp_root("transition");
        fake_cpu(&root, 0, "235", "235");
        fake_cpu(&root, 3, "96", "0");
        fs::create_dir_all(root.join("cpufreq")).unwrap();
        assert_eq!(cpus_in_transition(&root), vec![3]);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn settling_waits_for_the_transition_and_gives_up_at_the_limit() {
        let root = temp_root("settle");
        fake_cpu(&root, 1, "235", "235");
        assert!(wait_until_settled(&root, Duration::from_millis(50)));
        fake_cpu(&root, 2, "120", "235");
        let start = Instant::now();
        assert!(!wait_until_settled(&root, Duration::from_millis(100)));
        assert!(start.elapsed() >= Duration::from_millis(100));
        fs::remove_dir_all(&root).unwrap();
    }

    /// A fake machine: its hotplug sequence, and a read that fails while `failing` reads are left.
    struct Churn {
        seq: std::cell::Cell<u64>,
        failing: std::cell::Cell<u32>,
        moves_seq: bool,
    }

    impl Churn {
        fn read(&self) -> Result<&'static str> {
            if self.failing.get() == 0 {
                return Ok("topology");
            }
            self.failing.set(self.failing.get() - 1);
            if self.moves_seq {
                self.seq.set(self.seq.get() + 1);
            }
            anyhow::bail!("cpu3/topology: No such file or directory")
        }
    }

    #[test]
    fn a_read_that_fails_while_cpus_change_is_tried_again() {
        let churn = Churn { seq: 7.into(), failing: 3.into(), moves_seq: true };
        let (seq, value) = read_between(|| Ok(churn.seq.get()), || churn.read(), || ()).unwrap();
        assert_eq!((seq, value), (10, "topology"), "the sequence read before the read that worked");
    }

    #[test]
    fn a_read_that_fails_with_no_hotplug_is_an_error_at_once() {
        let churn = Churn { seq: 7.into(), failing: 1.into(), moves_seq: false };
        let err = read_between(|| Ok(churn.seq.get()), || churn.read(), || ()).unwrap_err();
        assert!(err.to_string().contains("No such file"), "{err:#}");
        assert_eq!(churn.failing.get(), 0, "tried once");
    }

    #[test]
    fn endless_churn_ends_in_the_last_error() {
        let churn = Churn { seq: 0.into(), failing: u32::MAX.into(), moves_seq: true };
        assert!(read_between(|| Ok(churn.seq.get()), || churn.read(), || ()).is_err());
        assert_eq!(u32::MAX - churn.failing.get(), READ_TRIES_WHILE_HOTPLUG);
    }

    #[test]
    fn a_rebuild_waits_for_a_new_cpu_that_stays_and_for_no_cpu_in_transition() {
        assert!(!rebuild_due("0-3", "0-3", Vec::new), "back where it was loaded: no rebuild");
        assert!(!rebuild_due("0-3", "0-2", Vec::new), "a CPU gone offline is followed");
        assert!(!rebuild_due("0-3", "0", Vec::new), "every CPU but 0 gone (a suspend) is followed");
        assert!(rebuild_due("0-2", "0-3", Vec::new), "CPU 3 was offline at load");
        assert!(rebuild_due("0,2", "0-1", Vec::new), "one CPU went, another came");
        assert!(rebuild_due("0-7", "0-7,64", Vec::new));
        assert!(!rebuild_due("0-2", "0-3", || vec![3]), "a CPU half-way");
        assert!(!rebuild_due("0-3", "", Vec::new), "the online list could not be read");
        assert!(!rebuild_due("0-3", "0-x", Vec::new), "nor parsed");
    }

    #[test]
    fn the_cpus_hotplug_states_are_read_only_once_the_online_list_changed() {
        let scans = std::cell::Cell::new(0);
        let scan = || {
            scans.set(scans.get() + 1);
            Vec::new()
        };
        assert!(!rebuild_due("0-3", "0-3", scan));
        assert!(!rebuild_due("0-3", "0-2", scan));
        assert_eq!(scans.get(), 0, "every exit check would read two files per CPU");
        assert!(rebuild_due("0-2", "0-3", scan));
        assert_eq!(scans.get(), 1);
    }
}
