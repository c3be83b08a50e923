//! The exporters behind the `metrics` facade: a Prometheus scrape endpoint and StatsD, chosen
//! on the command line and installed together as the global recorder. They live here, with
//! the runtime, so that the pure library (crates/scxkit) has no network code.

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use metrics_exporter_prometheus::PrometheusBuilder;
use metrics_exporter_statsd::StatsdBuilder;
use metrics_util::layers::FanoutBuilder;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Port of the Prometheus endpoint unless `--prometheus-addr` says otherwise.
pub const DEFAULT_PROMETHEUS_PORT: u16 = 9000;

#[derive(Debug, Clone, Args)]
pub struct MetricsOpts {
    /// Serve the statistics to Prometheus over HTTP (any path, e.g. /metrics).
    #[arg(long)]
    pub enable_prometheus: bool,

    /// Where the Prometheus endpoint listens: PORT (on 127.0.0.1) or ADDRESS:PORT.
    #[arg(long, value_name = "[ADDRESS:]PORT", default_value = "127.0.0.1:9000", value_parser = parse_listen_addr)]
    pub prometheus_addr: SocketAddr,

    /// Send the statistics to a StatsD server over UDP, e.g. 127.0.0.1:8125.
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_host_port)]
    pub statsd: Option<(String, u16)>,

    /// Print every statistic with its kind, unit and description, then exit.
    #[arg(long)]
    pub help_stats: bool,
}

impl MetricsOpts {
    pub fn any_backend(&self) -> bool {
        self.enable_prometheus || self.statsd.is_some()
    }
}

/// Installs the chosen backends as the global recorder; every series carries the label
/// `scheduler=<name>`. Does nothing when none is chosen.
pub fn install(opts: &MetricsOpts, scheduler: &str) -> Result<()> {
    let mut fanout = FanoutBuilder::default();
    if opts.enable_prometheus {
        fanout = fanout.add_recorder(start_prometheus(opts.prometheus_addr, scheduler)?);
        log::info!("Prometheus metrics on http://{}/metrics", opts.prometheus_addr);
    }
    if let Some((host, port)) = &opts.statsd {
        let recorder = StatsdBuilder::from(host.clone(), *port)
            .with_default_tag("scheduler", scheduler)
            .build(None)
            .map_err(|e| anyhow!("--statsd {host}:{port}: {e}"))?;
        fanout = fanout.add_recorder(recorder);
        log::info!("StatsD metrics to {host}:{port}");
    }
    if opts.any_backend() {
        metrics::set_global_recorder(fanout.build()).map_err(|e| anyhow!("installing the metrics recorder: {e}"))?;
    }
    Ok(())
}

/// Builds the Prometheus recorder and serves it from a thread of its own.
fn start_prometheus(addr: SocketAddr, scheduler: &str) -> Result<metrics_exporter_prometheus::PrometheusRecorder> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the Prometheus endpoint")?;
    let (recorder, exporter) = {
        let _guard = runtime.enter();
        PrometheusBuilder::new()
            .with_http_listener(addr)
            .add_global_label("scheduler", scheduler)
            .build()
            .with_context(|| format!("--prometheus-addr {addr}: cannot serve there"))?
    };
    std::thread::Builder::new()
        .name("prometheus".into())
        .spawn(move || runtime.block_on(exporter))
        .context("starting the Prometheus thread")?;
    Ok(recorder)
}

fn parse_listen_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse().map_err(|_| format!("'{text}' is neither a port nor ADDRESS:PORT (e.g. 9000, 0.0.0.0:9000)"))
}

fn parse_host_port(text: &str) -> Result<(String, u16), String> {
    let check = || -> Result<(String, u16)> {
        let (host, port) = text.rsplit_once(':').context("missing ':PORT'")?;
        if host.is_empty() {
            bail!("missing host");
        }
        let port = port.parse::<u16>().with_context(|| format!("'{port}' is not a port"))?;
        Ok((host.trim_matches(['[', ']']).to_string(), port))
    };
    check().map_err(|e| format!("'{text}' is not HOST:PORT: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_address_forms() {
        assert_eq!(parse_listen_addr("9100").unwrap().to_string(), "127.0.0.1:9100");
        assert_eq!(parse_listen_addr("0.0.0.0:9000").unwrap().to_string(), "0.0.0.0:9000");
        assert!(parse_listen_addr("localhost").unwrap_err().contains("neither a port"));
    }

    #[test]
    fn statsd_address_forms() {
        assert_eq!(parse_host_port("127.0.0.1:8125").unwrap(), ("127.0.0.1".into(), 8125));
        assert_eq!(parse_host_port("stats.local:8125").unwrap().0, "stats.local");
        assert!(parse_host_port("8125").unwrap_err().contains("missing ':PORT'"));
        assert!(parse_host_port("host:x").unwrap_err().contains("'x' is not a port"));
    }
}
