//! Build-script helper shared by every scxkit crate that holds BPF C or shared headers.
//!
//! A scheduler's `build.rs` is one call, [`build_scheduler`]: it compiles
//! `src/bpf/main.bpf.c` with clang into a libbpf-rs skeleton (`$OUT_DIR/bpf_skel.rs`) and
//! turns `src/bpf/intf.h` into Rust types (`$OUT_DIR/intf.rs`), so `intf.h` stays the one
//! definition of what BPF and Rust share. A scheduler that outgrows one file adds more
//! `src/bpf/*.bpf.c` units: each is compiled alone and all are linked into one object
//! (libbpf's static linker), so the skeleton stays one.

use anyhow::{bail, Context, Result};
use libbpf_cargo::SkeletonBuilder;
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

mod units;
pub use units::{bpf_units, build_linked_skeleton, compile_header_alone, headers_in};

/// Clang versions tried in order when `SCXKIT_CLANG` is not set; the first found wins.
const CLANG_CANDIDATES: &[&str] = &["clang-19", "clang"];

/// The project's `bpf/include` directory: vmlinux.h and the scxkit BPF headers.
pub fn bpf_include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bpf/include")
}

/// Compiles a scheduler crate's BPF program and shared header.
pub fn build_scheduler() -> Result<()> {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?);
    let bpf_dir = manifest.join("src/bpf");
    let out_dir = PathBuf::from(env::var("OUT_DIR")?);
    let units = bpf_units(&bpf_dir)?;
    let skeleton = out_dir.join("bpf_skel.rs");
    match units.as_slice() {
        [main] => build_skeleton(main, &skeleton)?,
        _ => build_linked_skeleton(&units, &out_dir.join("bpf-units"), &skeleton)?,
    }
    bindgen_header(&bpf_dir.join("intf.h"), &out_dir.join("intf.rs"))?;
    println!("cargo:rerun-if-changed={}", bpf_dir.display());
    Ok(())
}

/// Compiles one BPF C file into a libbpf-rs skeleton.
pub fn build_skeleton(source: &Path, output: &Path) -> Result<()> {
    let clang = find_clang()?;
    let source_dir = source.parent().context("BPF source has no directory")?;
    SkeletonBuilder::new()
        .source(source)
        .clang(&clang)
        .clang_args(clang_args(source_dir))
        .build_and_generate(output)
        .with_context(|| format!("compiling {} with {}", source.display(), clang.display()))?;
    rerun_if_changed_dir(&bpf_include_dir());
    Ok(())
}

/// What clang is given for every BPF unit, beside the target and libbpf's own headers.
fn clang_args(source_dir: &Path) -> Vec<String> {
    vec![
        format!("-I{}", bpf_include_dir().display()),
        format!("-I{}", source_dir.display()),
        "-Wall".into(),
        "-Wno-compare-distinct-pointer-types".into(),
        "-Wno-unused-function".into(),
        "-mcpu=v3".into(),
    ]
}

/// Turns a C header shared with BPF into Rust declarations.
pub fn bindgen_header(header: &Path, output: &Path) -> Result<()> {
    let include = bpf_include_dir();
    bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_arg(format!("-I{}", include.display()))
        .allowlist_recursively(true)
        .derive_default(true)
        .prepend_enum_name(false)
        .layout_tests(false)
        .generate()
        .with_context(|| format!("bindgen on {}", header.display()))?
        .write_to_file(output)
        .with_context(|| format!("writing {}", output.display()))?;
    println!("cargo:rerun-if-changed={}", header.display());
    Ok(())
}

/// The clang that compiles BPF C: `SCXKIT_CLANG`, else the first of `CLANG_CANDIDATES`
/// found. Public so that a crate compiling a BPF test fixture uses the same compiler.
pub fn find_clang() -> Result<PathBuf> {
    if let Ok(path) = env::var("SCXKIT_CLANG") {
        return Ok(PathBuf::from(path));
    }
    for name in CLANG_CANDIDATES {
        let found = Command::new(name).arg("--version").output().map(|o| o.status.success());
        if found.unwrap_or(false) {
            return Ok(PathBuf::from(name));
        }
    }
    bail!("no clang found (tried {CLANG_CANDIDATES:?}); run vm/setup-host.sh or set SCXKIT_CLANG")
}

fn rerun_if_changed_dir(dir: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    if let Ok(entries) = std::fs::read_dir(dir.join("scxkit")) {
        for entry in entries.flatten() {
            println!("cargo:rerun-if-changed={}", entry.path().display());
        }
    }
}
