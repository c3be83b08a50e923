//! Schedulers built from several BPF units, and the check that each BPF header compiles
//! alone (so that it includes what it uses).

use super::{bpf_include_dir, clang_args, find_clang, rerun_if_changed_dir};
use anyhow::{bail, Context, Result};
use libbpf_cargo::SkeletonBuilder;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The BPF units of a scheduler: `main.bpf.c` first, then the other `*.bpf.c` files of
/// `bpf_dir` by name.
pub fn bpf_units(bpf_dir: &Path) -> Result<Vec<PathBuf>> {
    let main = bpf_dir.join("main.bpf.c");
    if !main.is_file() {
        bail!("{} is missing: a scheduler's first BPF unit", main.display());
    }
    let entries = fs::read_dir(bpf_dir).with_context(|| format!("reading {}", bpf_dir.display()))?;
    let mut others: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| *p != main && has_suffix(p, ".bpf.c")).collect();
    others.sort();
    Ok([main].into_iter().chain(others).collect())
}

/// Compiles each unit alone into `work_dir`, links them into one object (libbpf's static
/// linker: a function or map one unit defines, another declares `extern`) and writes its
/// skeleton to `output`, named after the first unit (`main.bpf.c`: `MainSkel`).
pub fn build_linked_skeleton(units: &[PathBuf], work_dir: &Path, output: &Path) -> Result<()> {
    let first = units.first().context("no BPF unit to link")?;
    fs::create_dir_all(work_dir).with_context(|| format!("creating {}", work_dir.display()))?;
    let objects = units
        .iter()
        .map(|unit| compile_unit(unit, unit.parent().context("BPF unit has no directory")?, work_dir))
        .collect::<Result<Vec<_>>>()?;
    let linked = work_dir.join(format!("{}.o", unit_stem(first)?));
    link(&objects, &linked)?;
    SkeletonBuilder::new()
        .obj(&linked)
        .generate(output)
        .with_context(|| format!("generating the skeleton of {}", linked.display()))?;
    rerun_if_changed_dir(&bpf_include_dir());
    Ok(())
}

/// The C headers (`*.h`) of `dir`, by name: `bpf/include/scxkit` for the shared ones, a
/// scheduler's `src/bpf` for its own.
pub fn headers_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut headers: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| has_suffix(p, ".h")).collect();
    headers.sort();
    Ok(headers)
}

/// Compiles, in `work_dir`, a BPF unit that includes `header` and nothing else, with the
/// header's directory on the include path as for a scheduler's own units.
pub fn compile_header_alone(header: &Path, work_dir: &Path) -> Result<()> {
    let header = header.canonicalize().with_context(|| format!("finding {}", header.display()))?;
    let header_dir = header.parent().context("header has no directory")?;
    let name = header.file_name().and_then(|n| n.to_str()).context("header name is not UTF-8")?;
    let owner = header_dir.parent().and_then(|d| d.file_name()).and_then(|n| n.to_str()).unwrap_or("top");
    let unit = work_dir.join(format!("{owner}_{}_alone.bpf.c", name.replace('.', "_")));
    fs::create_dir_all(work_dir).with_context(|| format!("creating {}", work_dir.display()))?;
    fs::write(&unit, format!("#include \"{}\"\n", header.display()))
        .with_context(|| format!("writing {}", unit.display()))?;
    compile_unit(&unit, header_dir, work_dir).map(|_| ())
}

/// Compiles one unit, finding its own headers in `source_dir`, into `work_dir/<stem>.unit.o`:
/// clang alone, with the flags libbpf-cargo gives a single unit. Not through libbpf-cargo,
/// which links each object by itself and so turns an `extern` map into a definition.
fn compile_unit(unit: &Path, source_dir: &Path, work_dir: &Path) -> Result<PathBuf> {
    let clang = find_clang()?;
    let object = work_dir.join(format!("{}.unit.o", unit_stem(unit)?));
    let output = Command::new(&clang)
        .args(clang_args(source_dir))
        .arg(format!("-I{}", libbpf_headers(work_dir)?.display()))
        .args(["-fno-stack-protector", &target_arch_define(), "-g", "-O2", "-target", "bpf", "-c"])
        .arg(unit)
        .arg("-o")
        .arg(&object)
        .output()
        .with_context(|| format!("running {}", clang.display()))?;
    if !output.status.success() {
        bail!("{} failed on {}:\n{}", clang.display(), unit.display(), String::from_utf8_lossy(&output.stderr));
    }
    Ok(object)
}

/// libbpf's BPF headers (bpf/bpf_helpers.h, ...), written under `work_dir`; their directory.
fn libbpf_headers(work_dir: &Path) -> Result<PathBuf> {
    let dir = work_dir.join("libbpf-headers");
    let bpf = dir.join("bpf");
    fs::create_dir_all(&bpf).with_context(|| format!("creating {}", bpf.display()))?;
    for (name, text) in libbpf_rs::libbpf_sys::API_HEADERS {
        fs::write(bpf.join(name), text).with_context(|| format!("writing {name}"))?;
    }
    Ok(dir)
}

/// `-D__TARGET_ARCH_x86` and the like, for bpf_tracing.h: the architecture built for.
fn target_arch_define() -> String {
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_else(|_| env::consts::ARCH.to_string());
    let kernel_arch = match arch.as_str() {
        "x86_64" => "x86",
        "aarch64" => "arm64",
        "powerpc64" => "powerpc",
        "s390x" => "s390",
        "riscv64" => "riscv",
        "loongarch64" => "loongarch",
        other => other,
    };
    format!("-D__TARGET_ARCH_{kernel_arch}")
}

fn link(objects: &[PathBuf], output: &Path) -> Result<()> {
    let mut linker = libbpf_rs::Linker::new(output).context("starting libbpf's linker")?;
    for object in objects {
        linker.add_file(object).with_context(|| format!("linking {}", object.display()))?;
    }
    linker.link().with_context(|| format!("writing {}", output.display()))
}

/// `main` for `main.bpf.c`.
fn unit_stem(unit: &Path) -> Result<&str> {
    let name = unit.file_name().and_then(|n| n.to_str()).context("BPF unit name is not UTF-8")?;
    Ok(name.split('.').next().unwrap_or(name))
}

fn has_suffix(path: &Path, suffix: &str) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(suffix))
}
