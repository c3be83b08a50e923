//! The framework owns its generic BPF part: it is compiled here, once, and policy crates
//! only depend on this crate.
fn main() -> anyhow::Result<()> {
    scxkit_build::build_scheduler()
}
