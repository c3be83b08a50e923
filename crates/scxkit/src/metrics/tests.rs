use super::*;
use metrics_exporter_prometheus::PrometheusBuilder;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

static DEFS: &[MetricDef] = &[
    MetricDef { name: "dispatched_tasks_total", labels: &[("type", "local")], kind: MetricKind::Counter, unit: Unit::Count, help: "Tasks dispatched to an idle CPU's local queue." },
    MetricDef { name: "dispatched_tasks_total", labels: &[("type", "shared")], kind: MetricKind::Counter, unit: Unit::Count, help: "Tasks dispatched through the shared queue." },
    MetricDef { name: "interactive_tasks", labels: &[], kind: MetricKind::Gauge, unit: Unit::Count, help: "Tasks classified interactive now." },
];

fn render_prometheus(readings: &[&[f64]]) -> String {
    let recorder = PrometheusBuilder::new().add_global_label("scheduler", "test").build_recorder();
    let handle = recorder.handle();
    let mut publisher = Publisher::new(DEFS);
    metrics::with_local_recorder(&recorder, || readings.iter().for_each(|r| publisher.publish(r)));
    handle.render()
}

#[test]
fn prometheus_output_holds_the_totals_and_passes_promtool() {
    let text = render_prometheus(&[&[5.0, 1.0, 3.0], &[8.0, 4.0, 2.0]]);
    assert!(text.contains("# HELP dispatched_tasks_total Tasks dispatched to an idle CPU's local queue."), "{text}");
    assert!(text.contains("# TYPE dispatched_tasks_total counter"), "{text}");
    assert!(text.contains("dispatched_tasks_total{scheduler=\"test\",type=\"local\"} 8"), "{text}");
    assert!(text.contains("dispatched_tasks_total{scheduler=\"test\",type=\"shared\"} 4"), "{text}");
    assert!(text.contains("interactive_tasks{scheduler=\"test\"} 2"), "{text}");

    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus) is needed: run vm/setup-host.sh");
    promtool.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = promtool.wait_with_output().unwrap();
    assert!(out.status.success(), "promtool: {}{}\n{text}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_counter_reset_by_a_restart_keeps_counting_up() {
    let text = render_prometheus(&[&[10.0, 0.0, 0.0], &[3.0, 0.0, 0.0]]);
    assert!(text.contains("dispatched_tasks_total{scheduler=\"test\",type=\"local\"} 13"), "{text}");
}

#[test]
fn statsd_listener_receives_the_counters() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let port = socket.local_addr().unwrap().port();
    let recorder = metrics_exporter_statsd::StatsdBuilder::from("127.0.0.1", port)
        .with_default_tag("scheduler", "test")
        .with_buffer_size(0)
        .build(None)
        .unwrap();
    let mut publisher = Publisher::new(DEFS);
    metrics::with_local_recorder(&recorder, || publisher.publish(&[5.0, 2.0, 3.0]));
    drop(recorder);
    let mut received = String::new();
    let mut buf = [0u8; 2048];
    while !(received.contains("type:local") && received.contains("type:shared") && received.contains("interactive_tasks")) {
        let n = socket.recv(&mut buf).expect("no StatsD datagram within 5 s");
        received.push_str(&String::from_utf8_lossy(&buf[..n]));
        received.push('\n');
    }
    assert!(received.contains("dispatched_tasks_total:5|c"), "{received}");
    assert!(received.contains("dispatched_tasks_total:2|c"), "{received}");
    assert!(received.contains("interactive_tasks:3|g"), "{received}");
    assert!(received.contains("scheduler:test"), "{received}");
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
    let earlier = Snapshot { defs: DEFS, values: vec![5.0, 1.0, 3.0] };
    let now = Snapshot { defs: DEFS, values: vec![8.0, 0.5, 2.0] };
    assert_eq!(now.get("dispatched_tasks_total", &[("type", "local")]), 8.0);
    assert_eq!(now.delta(&earlier, "dispatched_tasks_total", &[("type", "local")]), 3.0);
    assert_eq!(now.delta(&earlier, "dispatched_tasks_total", &[("type", "shared")]), 0.5, "reset");
    assert_eq!(now.get("no_such_metric", &[]), 0.0);
}
