use super::*;

static DEFS: &[MetricDef] = &[
    MetricDef { name: "dispatched_tasks_total", labels: &[("type", "local")], kind: MetricKind::Counter, unit: Unit::Count, help: "Tasks dispatched to an idle CPU's local queue." },
    MetricDef { name: "dispatched_tasks_total", labels: &[("type", "shared")], kind: MetricKind::Counter, unit: Unit::Count, help: "Tasks dispatched through the shared queue." },
    MetricDef { name: "interactive_tasks", labels: &[], kind: MetricKind::Gauge, unit: Unit::Count, help: "Tasks classified interactive now." },
];

/// A load per domain, labelled at run time with its node and domain: two nodes, three domains.
static DOMAIN_LOAD: MetricDef =
    MetricDef { name: "domain_load", labels: &[], kind: MetricKind::Gauge, unit: Unit::Count, help: "Load of a domain." };

fn nested_layout() -> Arc<[Series]> {
    [("0", "0"), ("0", "1"), ("1", "2")]
        .iter()
        .map(|(node, dom)| Series::with(&DOMAIN_LOAD, &[("node", node.to_string()), ("domain", dom.to_string())]))
        .collect()
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
    let layout = static_layout(DEFS);
    let earlier = Snapshot { series: layout.clone(), values: vec![5.0, 1.0, 3.0] };
    let now = Snapshot { series: layout, values: vec![8.0, 0.5, 2.0] };
    assert_eq!(now.get("dispatched_tasks_total", &[("type", "local")]), 8.0);
    assert_eq!(now.delta(&earlier, "dispatched_tasks_total", &[("type", "local")]), 3.0);
    assert_eq!(now.delta(&earlier, "dispatched_tasks_total", &[("type", "shared")]), 0.5, "reset");
    assert_eq!(now.get("no_such_metric", &[]), 0.0);
    assert_eq!(now.get("dispatched_tasks_total", &[]), 0.0, "exact labels only");
    assert_eq!(now.sum("dispatched_tasks_total", &[]), 8.5);
    assert_eq!(now.sum_delta(&earlier, "dispatched_tasks_total", &[]), 3.5);
}

#[test]
fn runtime_labels_nest_nodes_and_domains() {
    let snap = Snapshot { series: nested_layout(), values: vec![1.0, 2.0, 4.0] };
    assert_eq!(snap.label_values("domain_load", "node"), ["0", "1"]);
    assert_eq!(snap.sum("domain_load", &[("node", "0")]), 3.0);
    assert_eq!(snap.sum("domain_load", &[("node", "1")]), 4.0);
    assert_eq!(snap.get("domain_load", &[("domain", "1"), ("node", "0")]), 2.0, "label order does not matter");
    assert_eq!(snap.series[2].key(), "domain_load{node=\"1\",domain=\"2\"}");
}

#[test]
fn text_round_trip_keeps_series_and_values() {
    let snap = Snapshot { series: nested_layout(), values: vec![1.5, 2.0, 4.0] };
    let back = parse_text(&[std::slice::from_ref(&DOMAIN_LOAD)], &to_text(&snap)).unwrap();
    assert_eq!(back.series, snap.series);
    assert_eq!(back.values, snap.values);

    let fixed = Snapshot { series: static_layout(DEFS), values: vec![1.0, 2.0, 3.0] };
    let back = parse_text(&[DEFS], &to_text(&fixed)).unwrap();
    assert_eq!(back.get("dispatched_tasks_total", &[("type", "shared")]), 2.0);
}

#[test]
fn text_from_another_scheduler_is_refused() {
    let err = parse_text(&[DEFS], "domain_load{node=\"0\"} 1\n").unwrap_err();
    assert!(format!("{err:#}").contains("not one this scheduler declares"), "{err:#}");
    assert!(parse_text(&[DEFS], "interactive_tasks x\n").is_err());
    assert!(parse_text(&[DEFS], "dispatched_tasks_total{type=local} 1\n").is_err());
}
