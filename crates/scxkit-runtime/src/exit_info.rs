//! Why a scheduler stopped, as recorded by the BPF side (bpf/include/scxkit/exit_info.h).

use anyhow::{Context, Result};
use libbpf_rs::{MapCore, MapFlags, Object};
use std::fmt;

#[allow(non_camel_case_types, non_upper_case_globals, dead_code)]
mod bindings {
    include!(concat!(env!("OUT_DIR"), "/exit_info.rs"));
}
use bindings::scxk_exit_info;

// SAFETY: bindgen's twin of the C struct: integers and char arrays.
unsafe impl crate::maps::PlainC for scxk_exit_info {}

/// Name of the one-slot map declared by exit_info.bpf.h.
const EXIT_INFO_MAP: &str = "scxk_exit_info";
/// Name of the map holding the kernel's debug dump in chunks (exit_info.bpf.h).
pub const EXIT_DUMP_MAP: &str = "scxk_exit_dump";
/// Characters each chunk of the dump map holds (the last byte is a NUL).
const DUMP_CHUNK_CHARS: usize = bindings::SCXK_EXIT_DUMP_CHUNK as usize - 1;
/// The largest dump the BPF side copies, in bytes.
pub const MAX_EXIT_DUMP_LEN: u32 = (bindings::SCXK_EXIT_DUMP_MAX_CHUNKS as usize * DUMP_CHUNK_CHARS) as u32;

/// Entries the dump map needs to hold a dump of `len` bytes.
pub fn dump_map_entries(len: u32) -> u32 {
    (len as usize).div_ceil(DUMP_CHUNK_CHARS).max(1) as u32
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExitInfo {
    /// The kernel's `enum scx_exit_kind`; 0 while the scheduler runs.
    pub kind: i32,
    pub exit_code: i64,
    pub restart: bool,
    pub reason: String,
    pub msg: String,
    /// The kernel's debug dump, recorded on error exits (empty otherwise).
    pub dump: String,
}

/// Names of the kernel's `enum scx_exit_kind` values (a kernel ABI, stable across series).
pub fn kind_name(kind: i32) -> &'static str {
    match kind {
        0 => "NONE",
        1 => "DONE",
        64 => "UNREG",
        65 => "UNREG_BPF",
        66 => "UNREG_KERN",
        67 => "SYSRQ",
        1024 => "ERROR",
        1025 => "ERROR_BPF",
        1026 => "ERROR_STALL",
        _ => "UNKNOWN",
    }
}

impl ExitInfo {
    pub fn has_exited(&self) -> bool {
        self.kind != 0
    }

    /// Kinds of 1024 and above are errors; below are orderly exits.
    pub fn is_error(&self) -> bool {
        self.kind >= 1024
    }

    /// Decodes the map value's bytes; `None` when the size is not the shared struct's.
    pub fn from_bytes(bytes: &[u8]) -> Option<ExitInfo> {
        let raw: scxk_exit_info = crate::maps::from_bytes(bytes)?;
        Some(ExitInfo {
            kind: raw.kind,
            exit_code: raw.exit_code,
            restart: raw.restart != 0,
            reason: c_chars_to_string(&raw.reason),
            msg: c_chars_to_string(&raw.msg),
            dump: String::new(),
        })
    }

    /// Reads the exit info of a loaded object, with the kernel's dump once it has exited.
    pub fn read(object: &Object) -> Result<ExitInfo> {
        let mut info = read_record(object)?;
        if info.has_exited() {
            info.dump = read_dump(object)?;
        }
        Ok(info)
    }

    /// Whether the scheduler has exited: the cheap check an attached scheduler's loop makes.
    pub fn has_exited_now(object: &Object) -> Result<bool> {
        Ok(read_record(object)?.has_exited())
    }

    /// Whether the runtime itself detached the scheduler (UNREG: "unregistered from user
    /// space"), not the kernel or the BPF side.
    pub fn detached_by_runtime(&self) -> bool {
        self.kind == 64
    }

    /// Whether the kernel ejected the scheduler because a CPU went on or offline.
    pub fn for_hotplug(&self) -> bool {
        self.exit_code & ECODE_RSN_HOTPLUG != 0
    }
}

impl fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.reason, kind_name(self.kind))?;
        if !self.msg.is_empty() {
            write!(f, ": {}", self.msg)?;
        }
        if self.exit_code != 0 {
            write!(f, " [exit code {:#x}]", self.exit_code)?;
        }
        Ok(())
    }
}

/// The kernel's SCX_ECODE_RSN_HOTPLUG and SCX_ECODE_ACT_RESTART bits of the exit code
/// (include/linux/sched/ext.h).
const ECODE_RSN_HOTPLUG: i64 = 1 << 32;
const ECODE_ACT_RESTART: i64 = 1 << 48;

impl ExitInfo {
    /// The exit of a scheduler the runtime detached to load it again for the CPUs online now
    /// (`Hotplug::RebuildsForNewCpus`): a restart for hotplug, as the kernel asks for one.
    /// Only its own detach: an exit the kernel recorded meanwhile (an error, SysRq) stays.
    pub fn rebuilt_for_hotplug(self, online: &str) -> ExitInfo {
        if !self.detached_by_runtime() {
            return self;
        }
        ExitInfo {
            restart: true,
            exit_code: ECODE_ACT_RESTART | ECODE_RSN_HOTPLUG,
            msg: format!("a CPU it was built without came online; the online CPUs settled on {online}: loading again for them"),
            ..self
        }
    }
}

fn read_record(object: &Object) -> Result<ExitInfo> {
    let map = object
        .maps()
        .find(|m| m.name() == EXIT_INFO_MAP)
        .with_context(|| format!("the BPF object has no '{EXIT_INFO_MAP}' map"))?;
    let bytes = map
        .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
        .context("reading the exit info")?
        .context("the exit info slot is missing")?;
    ExitInfo::from_bytes(&bytes).context("the exit info has an unexpected size")
}

/// Joins the dump's chunks up to the first that ends before its last character.
fn read_dump(object: &Object) -> Result<String> {
    let Some(map) = object.maps().find(|m| m.name() == EXIT_DUMP_MAP) else { return Ok(String::new()) };
    let mut chunks = Vec::new();
    for i in 0..map.max_entries() {
        let bytes = map.lookup(&i.to_ne_bytes(), MapFlags::ANY).context("reading the exit dump")?.unwrap_or_default();
        chunks.push(bytes);
    }
    Ok(join_dump_chunks(&chunks))
}

fn join_dump_chunks(chunks: &[Vec<u8>]) -> String {
    let mut out = Vec::new();
    for chunk in chunks {
        let text: Vec<u8> = chunk.iter().copied().take_while(|&b| b != 0).collect();
        let complete = text.len() < DUMP_CHUNK_CHARS;
        out.extend(text);
        if complete {
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn c_chars_to_string(chars: &[std::os::raw::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(kind: i32, restart: i32, code: i64, reason: &str, msg: &str) -> Vec<u8> {
        let mut raw = scxk_exit_info { kind, restart, exit_code: code, ..Default::default() };
        for (dst, src) in raw.reason.iter_mut().zip(reason.bytes()) {
            *dst = src as _;
        }
        for (dst, src) in raw.msg.iter_mut().zip(msg.bytes()) {
            *dst = src as _;
        }
        crate::maps::as_bytes(&raw).to_vec()
    }

    #[test]
    fn decodes_a_hotplug_restart() {
        let info = ExitInfo::from_bytes(&encode(66, 1, 1 << 48, "hotplug", "cpu 3 went offline")).unwrap();
        assert!(info.has_exited() && info.restart && !info.is_error() && !info.for_hotplug());
        let hotplug = ExitInfo::from_bytes(&encode(66, 1, (1 << 48) | (1 << 32), "hotplug", "")).unwrap();
        assert!(hotplug.for_hotplug());
        assert_eq!(info.reason, "hotplug");
        assert_eq!(info.to_string(), "hotplug (UNREG_KERN): cpu 3 went offline [exit code 0x1000000000000]");
    }

    #[test]
    fn dump_chunks_join_up_to_the_end_of_the_text() {
        let full = |c: u8| { let mut v = vec![c; DUMP_CHUNK_CHARS]; v.push(0); v };
        let mut last = b"tail".to_vec();
        last.resize(DUMP_CHUNK_CHARS + 1, 0);
        let stale = full(b'z');
        let text = join_dump_chunks(&[full(b'a'), last, stale]);
        assert_eq!(text.len(), DUMP_CHUNK_CHARS + 4);
        assert!(text.starts_with("aaa") && text.ends_with("tail"), "stops at the chunk with the NUL");
        assert_eq!(join_dump_chunks(&[vec![0u8; DUMP_CHUNK_CHARS + 1]]), "");
        assert_eq!(dump_map_entries(32768), 33);
        assert_eq!(dump_map_entries(1), 1);
    }

    #[test]
    fn a_running_scheduler_has_not_exited() {
        let info = ExitInfo::from_bytes(&encode(0, 0, 0, "", "")).unwrap();
        assert!(!info.has_exited());
    }

    #[test]
    fn rejects_a_wrong_size_and_names_error_kinds() {
        assert!(ExitInfo::from_bytes(&[0u8; 3]).is_none());
        let stall = ExitInfo::from_bytes(&encode(1026, 0, 0, "watchdog", "")).unwrap();
        assert!(stall.is_error());
        assert_eq!(kind_name(1026), "ERROR_STALL");
        assert_eq!(kind_name(12345), "UNKNOWN");
    }
}
