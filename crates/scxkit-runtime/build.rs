use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() -> Result<()> {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let header = scxkit_build::bpf_include_dir().join("scxkit/exit_info.h");
    scxkit_build::bindgen_header(&header, &out_dir.join("exit_info.rs"))?;
    let fixture = manifest_dir.join("tests/fixtures/kfunc_protos.bpf.c");
    build_btf_fixture(&fixture, &out_dir.join("kfunc_protos.bpf.o"))?;
    println!("cargo:rustc-env={GIT_COMMIT_ENV}={}", git_commit(&manifest_dir));
    Ok(())
}

/// Names the commit in `--version`. Set it to build from a tree without git (a source
/// package); otherwise `git rev-parse` decides, and "unknown" outside a git tree.
const GIT_COMMIT_ENV: &str = "SCXKIT_GIT_COMMIT";

fn git_commit(dir: &Path) -> String {
    println!("cargo:rerun-if-env-changed={GIT_COMMIT_ENV}");
    if let Ok(commit) = std::env::var(GIT_COMMIT_ENV) {
        return commit;
    }
    let Some(commit) = git(dir, &["rev-parse", "--short", "HEAD"]) else {
        return "unknown".into();
    };
    rerun_when_head_moves(dir);
    commit
}

/// Builds again when HEAD moves: a commit, a checkout, a branch pointer updated elsewhere.
fn rerun_when_head_moves(dir: &Path) {
    let mut watched = vec![git(dir, &["rev-parse", "--git-path", "HEAD"])];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(dir, &["rev-parse", "--git-path", &branch]));
    }
    watched.push(git(dir, &["rev-parse", "--git-path", "packed-refs"]));
    for path in watched.into_iter().flatten().map(|p| dir.join(p)) {
        // A path that does not exist would make cargo run this script on every build.
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
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
