use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() -> Result<()> {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let header = scxkit_build::bpf_include_dir().join("scxkit/exit_info.h");
    scxkit_build::bindgen_header(&header, &out_dir.join("exit_info.rs"))?;
    let fixture = manifest_dir.join("tests/fixtures/kfunc_protos.bpf.c");
    build_btf_fixture(&fixture, &out_dir.join("kfunc_protos.bpf.o"))
}

/// Compiles the BTF fixture of the compat tests. It is built with every build, not only
/// the tests', because a build script cannot tell them apart; it costs one small clang run.
fn build_btf_fixture(source: &Path, object: &Path) -> Result<()> {
    let clang = scxkit_build::find_clang()?;
    let status = Command::new(&clang)
        .args(["-target", "bpf", "-g", "-O2", "-Wall", "-c"])
        .arg(source)
        .arg("-o")
        .arg(object)
        .status()
        .with_context(|| format!("running {}", clang.display()))?;
    if !status.success() {
        bail!("{} failed on {} ({status})", clang.display(), source.display());
    }
    println!("cargo:rerun-if-changed={}", source.display());
    Ok(())
}
