fn main() -> anyhow::Result<()> {
    let header = scxkit_build::bpf_include_dir().join("scxkit/exit_info.h");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?).join("exit_info.rs");
    scxkit_build::bindgen_header(&header, &out)
}
