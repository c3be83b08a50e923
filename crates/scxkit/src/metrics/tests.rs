use super::fixture::{domain_loads, reading, DEFS, DISPATCHED_LOCAL, DOMAIN_DEFS, DOMAIN_LOAD, INTERACTIVE_TASKS};
use super::*;

fn nested() -> Snapshot {
    domain_loads(&[("0", "0", 1.0), ("0", "1", 2.0), ("1", "2", 4.0)])
}

#[test]
fn help_text_lists_every_statistic() {
    let text = help_text(DEFS);
    assert_eq!(text.lines().count(), DEFS.len());
    assert!(text.contains("dispatched_tasks_total{type=\"shared\"}"));
    assert!(text.lines().all(|l| l.contains("count")));
    assert!(text.contains("Tasks classified interactive now."));
}

#[test]
fn snapshot_lookup_and_deltas() {
    let earlier = reading([5.0, 1.0, 3.0]);
    let now = reading([8.0, 0.5, 2.0]);
    assert_eq!(now.get("dispatched_tasks_total", &[("type", "local")]), 8.0);
    assert_eq!(now.delta(&earlier, "dispatched_tasks_total", &[("type", "local")]), 3.0);
    assert_eq!(now.delta(&earlier, "dispatched_tasks_total", &[("type", "shared")]), 0.5, "reset");
    assert_eq!(now.get("no_such_metric", &[]), 0.0);
    assert_eq!(now.get("dispatched_tasks_total", &[]), 0.0, "exact labels only");
    assert_eq!(now.sum("dispatched_tasks_total", &[]), 8.5);
    assert_eq!(now.sum_delta(&earlier, "dispatched_tasks_total", &[]), 3.5);
}

#[test]
fn setting_a_series_again_replaces_its_value_in_place() {
    let mut now = reading([1.0, 2.0, 3.0]);
    now.set(&DISPATCHED_LOCAL, 7.0);
    assert_eq!(now.len(), 3);
    assert_eq!(now.get("dispatched_tasks_total", &[("type", "local")]), 7.0);
    let order: Vec<String> = now.iter().map(|(s, _)| s.key()).collect();
    assert_eq!(order[0], "dispatched_tasks_total{type=\"local\"}", "first set, first shown");
}

#[test]
fn series_may_appear_and_vanish_between_readings() {
    let earlier = nested();
    let mut now = domain_loads(&[("0", "0", 3.0), ("1", "3", 5.0)]);
    now.set(&INTERACTIVE_TASKS, 2.0);
    assert_eq!(now.label_values("domain_load", "domain"), ["0", "3"], "domains 1 and 2 are gone, 3 is new");
    assert_eq!(now.delta(&earlier, "domain_load", &[("node", "1"), ("domain", "3")]), 5.0, "new: counts from 0");
    assert_eq!(now.sum_delta(&earlier, "domain_load", &[]), 2.0 + 5.0, "only the series of this reading");
    assert_eq!(earlier.delta(&now, "domain_load", &[("node", "0"), ("domain", "1")]), 2.0);
    assert_eq!(now.get("interactive_tasks", &[]), 2.0);
    assert_eq!(Snapshot::new().delta(&now, "interactive_tasks", &[]), 0.0, "a vanished counter grew by nothing");
}

#[test]
fn runtime_labels_nest_nodes_and_domains() {
    let snap = nested();
    assert_eq!(snap.label_values("domain_load", "node"), ["0", "1"]);
    assert_eq!(snap.sum("domain_load", &[("node", "0")]), 3.0);
    assert_eq!(snap.sum("domain_load", &[("node", "1")]), 4.0);
    assert_eq!(snap.get("domain_load", &[("domain", "1"), ("node", "0")]), 2.0, "label order does not matter");
    assert_eq!(snap.iter().nth(2).unwrap().0.key(), "domain_load{node=\"1\",domain=\"2\"}");
}

#[test]
fn counters_are_set_through_their_slots() {
    let slots: &[CounterSlot] = &[(4, &DISPATCHED_LOCAL), (0, &DOMAIN_LOAD)];
    let mut reading = Snapshot::new();
    set_counters(&mut reading, slots, |slot| Ok(10 * slot as u64 + 1)).unwrap();
    assert_eq!(reading.get("dispatched_tasks_total", &[("type", "local")]), 41.0);
    assert_eq!(reading.get("domain_load", &[]), 1.0);
    assert!(set_counters(&mut reading, slots, |_| anyhow::bail!("no map")).is_err());
    assert_eq!(misbound_slots(slots, 5), [1, 2, 3]);
    assert_eq!(misbound_slots(&[(0, &DISPATCHED_LOCAL), (0, &DOMAIN_LOAD)], 1), [0], "bound twice");
}

fn pairs(snap: &Snapshot) -> Vec<(String, f64)> {
    snap.iter().map(|(s, v)| (s.key(), v)).collect()
}

#[test]
fn text_round_trip_keeps_series_and_values() {
    let snap = domain_loads(&[("0", "0", 1.5), ("0", "1", 2.0), ("1", "2", 4.0)]);
    let back = parse_text(&[DOMAIN_DEFS], &to_text(&snap)).unwrap();
    assert_eq!(pairs(&back), pairs(&snap));

    let back = parse_text(&[DEFS], &to_text(&reading([1.0, 2.0, 3.0]))).unwrap();
    assert_eq!(back.get("dispatched_tasks_total", &[("type", "shared")]), 2.0);
}

#[test]
fn text_from_another_scheduler_is_refused() {
    let err = parse_text(&[DEFS], "domain_load{node=\"0\"} 1\n").unwrap_err();
    assert!(format!("{err:#}").contains("not one this scheduler declares"), "{err:#}");
    assert!(parse_text(&[DEFS], "interactive_tasks x\n").is_err());
    assert!(parse_text(&[DEFS], "dispatched_tasks_total{type=local} 1\n").is_err());
}
