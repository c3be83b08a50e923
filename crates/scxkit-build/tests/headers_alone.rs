//! Every BPF header compiles as the only include of a BPF unit: it includes what it uses,
//! so a unit may include any of them first, in any order. The shared headers, and each
//! scheduler's own (with its src/bpf on the include path, as for its units).

use scxkit_build::{bpf_include_dir, compile_header_alone, headers_in};
use std::path::{Path, PathBuf};

fn workspace_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn assert_each_compiles_alone(headers: &[PathBuf], work: &str) {
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(work);
    let failures: Vec<String> = headers
        .iter()
        .filter_map(|h| compile_header_alone(h, &work).err().map(|e| format!("{}: {e:#}", h.display())))
        .collect();
    assert!(failures.is_empty(), "headers that do not compile alone:\n{}", failures.join("\n"));
}

#[test]
fn each_shared_header_compiles_alone() {
    let headers = headers_in(&bpf_include_dir().join("scxkit")).unwrap();
    assert!(headers.len() >= 10, "found only {headers:?}");
    assert_each_compiles_alone(&headers, "shared_headers_alone");
}

#[test]
fn each_scheduler_header_compiles_alone() {
    let dirs = ["scheds/scx_simple", "scheds/scx_bpfland", "scheds/scx_rusty", "crates/scxkit-userspace"];
    let headers: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| headers_in(&workspace_dir().join(d).join("src/bpf")).unwrap())
        .collect();
    assert!(headers.len() >= 15, "found only {headers:?}");
    assert_each_compiles_alone(&headers, "scheduler_headers_alone");
}
