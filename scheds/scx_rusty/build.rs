fn main() -> anyhow::Result<()> {
    scxkit_build::build_scheduler()
}
