use super::*;
use metrics_exporter_prometheus::PrometheusBuilder;
use scxkit::metrics::fixture::{domain_loads, reading as snap};
use scxkit::metrics::MetricDef;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

pub(crate) fn render_prometheus(readings: &[Snapshot], reset_before: Option<usize>) -> String {
    let recorder = PrometheusBuilder::new().add_global_label("scheduler", "test").build_recorder();
    let handle = recorder.handle();
    let mut publisher = Publisher::new();
    metrics::with_local_recorder(&recorder, || {
        for (i, r) in readings.iter().enumerate() {
            if reset_before == Some(i) {
                publisher.reset_counters();
            }
            publisher.publish(r);
        }
    });
    handle.render()
}

#[test]
fn prometheus_output_holds_the_totals_and_passes_promtool() {
    let mut readings = vec![snap([5.0, 1.0, 3.0]), snap([8.0, 4.0, 2.0])];
    readings.push(domain_loads(&[("0", "0", 0.5), ("0", "1", 1.5)]));
    let text = render_prometheus(&readings, None);
    assert!(text.contains("# HELP dispatched_tasks_total Tasks dispatched to an idle CPU's local queue."), "{text}");
    assert!(text.contains("# TYPE dispatched_tasks_total counter"), "{text}");
    assert!(text.contains("dispatched_tasks_total{scheduler=\"test\",type=\"local\"} 8"), "{text}");
    assert!(text.contains("dispatched_tasks_total{scheduler=\"test\",type=\"shared\"} 4"), "{text}");
    assert!(text.contains("interactive_tasks{scheduler=\"test\"} 2"), "{text}");
    assert!(text.contains("domain_load{scheduler=\"test\",node=\"0\",domain=\"1\"} 1.5"), "{text}");

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
fn a_restart_resets_the_baseline_and_counting_goes_on() {
    // 10, then a restart (BPF counters from zero), then 3 and 7: 10 + 3 + 4 = 17.
    let readings = [snap([10.0, 0.0, 0.0]), snap([3.0, 0.0, 0.0]), snap([7.0, 0.0, 0.0])];
    let text = render_prometheus(&readings, Some(1));
    assert!(text.contains("dispatched_tasks_total{scheduler=\"test\",type=\"local\"} 17"), "{text}");
    // A restarted counter that already passed its old value when first read again: only the
    // reset tells its 12 from a growth of 2.
    let readings = [snap([10.0, 0.0, 0.0]), snap([12.0, 0.0, 0.0])];
    let text = render_prometheus(&readings, Some(1));
    assert!(text.contains("type=\"local\"} 22"), "{text}");
}

static CPU_SECONDS: MetricDef = MetricDef {
    name: "scheduler_cpu_seconds_total",
    labels: &[],
    kind: MetricKind::Counter,
    unit: Unit::Seconds,
    help: "CPU time of the scheduler's threads.",
};

fn cpu_seconds(readings_s: &[f64]) -> Vec<Snapshot> {
    readings_s
        .iter()
        .map(|&s| {
            let mut reading = Snapshot::new();
            reading.set(&CPU_SECONDS, s);
            reading
        })
        .collect()
}

/// The total the recorder holds for `scheduler_cpu_seconds_total` after these readings.
fn published_cpu_seconds(readings: &[Snapshot], reset_before: Option<usize>) -> f64 {
    let text = render_prometheus(readings, reset_before);
    let line = text.lines().find(|l| l.starts_with("scheduler_cpu_seconds_total{")).unwrap_or_else(|| panic!("{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn fractional_counters_publish_the_whole_part_of_their_total_after_every_sample() {
    // 0.4 s of CPU per sample: 0.4, 0.8, 1.2, ... 4.0.
    let readings = cpu_seconds(&(1..=10).map(|k| 0.4 * k as f64).collect::<Vec<_>>());
    for samples in 1..=readings.len() {
        let whole_s = (4 * samples / 10) as f64;
        assert_eq!(published_cpu_seconds(&readings[..samples], None), whole_s, "after {samples} samples");
    }
}

#[test]
fn a_restart_keeps_the_fraction_counted_before_it() {
    // 1.6 s before the restart and 0.9 s after it: 2.5 s in all, 2 published.
    let readings = cpu_seconds(&[0.7, 1.6, 0.5, 0.9]);
    assert_eq!(published_cpu_seconds(&readings, Some(2)), 2.0, "restart told by the runner");
    assert_eq!(published_cpu_seconds(&readings, None), 2.0, "restart seen as a smaller reading");
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
    let mut publisher = Publisher::new();
    metrics::with_local_recorder(&recorder, || publisher.publish(&snap([5.0, 2.0, 3.0])));
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
fn a_vanished_series_keeps_its_last_value_and_a_new_one_starts_from_its_first() {
    let readings = [domain_loads(&[("0", "0", 2.0), ("0", "1", 3.0)]), domain_loads(&[("0", "0", 4.0), ("1", "2", 1.0)])];
    let text = render_prometheus(&readings, None);
    assert!(text.contains("domain_load{scheduler=\"test\",node=\"0\",domain=\"0\"} 4"), "{text}");
    assert!(text.contains("domain_load{scheduler=\"test\",node=\"0\",domain=\"1\"} 3"), "{text}");
    assert!(text.contains("domain_load{scheduler=\"test\",node=\"1\",domain=\"2\"} 1"), "{text}");
}
