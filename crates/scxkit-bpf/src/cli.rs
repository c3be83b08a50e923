//! Options every scheduler takes, flattened into its own clap parser.

use clap::Args;
use scxkit::metrics::backends::MetricsOpts;

#[derive(Debug, Clone, Args)]
pub struct CommonOpts {
    /// Print statistics every SECONDS seconds (fractions allowed, e.g. 0.5). Off by default.
    #[arg(long, value_name = "SECONDS", value_parser = parse_interval_s)]
    pub stats: Option<f64>,

    /// Verbose output: debug logs and libbpf's messages while loading.
    #[arg(short, long)]
    pub verbose: bool,

    #[command(flatten)]
    pub metrics: MetricsOpts,
}

/// Smallest stats interval accepted, in seconds.
pub const MIN_STATS_INTERVAL_S: f64 = 0.1;
/// How often metrics are read for the exporters when `--stats` is not given, in seconds.
pub const EXPORT_INTERVAL_S: f64 = 1.0;

impl CommonOpts {
    /// How often to read the statistics: the `--stats` interval, else once a second when an
    /// exporter wants them, else never.
    pub fn sample_interval_s(&self) -> Option<f64> {
        self.stats.or(self.metrics.any_backend().then_some(EXPORT_INTERVAL_S))
    }
}

fn parse_interval_s(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if !(value >= MIN_STATS_INTERVAL_S) || !value.is_finite() {
        return Err(format!("must be at least {MIN_STATS_INTERVAL_S} seconds, got '{text}'"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_parsing() {
        assert_eq!(parse_interval_s("2"), Ok(2.0));
        assert_eq!(parse_interval_s("0.5"), Ok(0.5));
        assert!(parse_interval_s("0").unwrap_err().contains("at least"));
        assert!(parse_interval_s("abc").unwrap_err().contains("'abc'"));
        assert!(parse_interval_s("NaN").is_err());
        assert!(parse_interval_s("inf").is_err());
    }
}
