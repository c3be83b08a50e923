mod bpf_skel { include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs")); }
fn main() {}
