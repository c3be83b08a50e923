//! Several BPF units of one scheduler become one object and one skeleton.

use libbpf_rs::ObjectBuilder;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/two_units")
}

#[test]
fn main_unit_comes_first_then_the_others_by_name() {
    let units = scxkit_build::bpf_units(&fixture_dir()).unwrap();
    let names: Vec<_> = units.iter().map(|u| u.file_name().unwrap().to_str().unwrap()).collect();
    assert_eq!(names, ["main.bpf.c", "helper.bpf.c"]);
}

#[test]
fn two_units_link_into_one_object_with_both_programs_and_shared_maps_once() {
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("two_units");
    let skeleton = work.join("bpf_skel.rs");
    let units = scxkit_build::bpf_units(&fixture_dir()).unwrap();
    scxkit_build::build_linked_skeleton(&units, &work, &skeleton).unwrap();

    let object = ObjectBuilder::default().open_file(work.join("main.o")).unwrap();
    let progs: BTreeSet<String> = object.progs().map(|p| p.name().to_string_lossy().into_owned()).collect();
    assert_eq!(progs, BTreeSet::from(["fixture_helper".to_string(), "fixture_main".to_string()]));
    let maps: Vec<String> = object.maps().map(|m| m.name().to_string_lossy().into_owned()).collect();
    for shared in ["scxk_exit_info", "scxk_offline_cpus", "stats", "fixture_calls"] {
        assert_eq!(maps.iter().filter(|m| *m == shared).count(), 1, "{shared} in {maps:?}");
    }
    let text = std::fs::read_to_string(&skeleton).unwrap();
    assert!(text.contains("struct MainSkel"), "the skeleton is named after main.bpf.c");
}
