//! Every shared BPF header compiles as the only include of a BPF unit: it includes what it
//! uses, so a scheduler may include any of them first, in any order.

use std::path::Path;

#[test]
fn each_shared_header_compiles_alone() {
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("headers_alone");
    let headers = scxkit_build::headers_to_check().unwrap();
    assert!(headers.len() >= 10, "found only {headers:?}");
    let failures: Vec<String> = headers
        .iter()
        .filter_map(|h| scxkit_build::compile_header_alone(h, &work).err().map(|e| format!("{}: {e:#}", h.display())))
        .collect();
    assert!(failures.is_empty(), "headers that do not compile alone:\n{}", failures.join("\n"));
}
