//! Options every scheduler takes, flattened into its own clap parser.

use crate::backends::MetricsOpts;
use crate::exit_info::MAX_EXIT_DUMP_LEN;
use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct CommonOpts {
    /// Print statistics every SECONDS seconds (fractions allowed, e.g. 0.5). Off by default.
    #[arg(long, value_name = "SECONDS", value_parser = parse_interval_s)]
    pub stats: Option<f64>,

    /// Verbose output: debug logs and libbpf's messages while loading.
    #[arg(short, long)]
    pub verbose: bool,

    /// Print the stats line of the scheduler already running, every SECONDS seconds, then
    /// exit when it stops. Needs no root; loads nothing.
    #[arg(long, value_name = "SECONDS", value_parser = parse_interval_s)]
    pub monitor: Option<f64>,

    /// Bytes of the kernel's debug dump to record when it ejects the scheduler on an error
    /// (a stall, say); the dump is printed on exit.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_EXIT_DUMP_LEN,
          value_parser = clap::value_parser!(u32).range(MIN_EXIT_DUMP_LEN as i64..=MAX_EXIT_DUMP_LEN as i64))]
    pub exit_dump_len: u32,

    /// The kernel ejects the scheduler when a runnable task has waited this long, in
    /// milliseconds (100 to 30000); 0 keeps the kernel's default (30000).
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = parse_watchdog_timeout_ms)]
    pub watchdog_timeout_ms: u32,

    #[command(flatten)]
    pub metrics: MetricsOpts,
}

/// The kernel's own default length of the exit dump, in bytes.
pub const DEFAULT_EXIT_DUMP_LEN: u32 = 32768;
/// Shortest exit dump accepted, in bytes.
pub const MIN_EXIT_DUMP_LEN: u32 = 256;
/// The kernel refuses a longer watchdog timeout (SCX_WATCHDOG_MAX_TIMEOUT), in milliseconds.
pub const MAX_WATCHDOG_TIMEOUT_MS: u32 = 30_000;
/// A shorter timeout is below a few scheduler ticks: it would eject a healthy scheduler.
pub const MIN_WATCHDOG_TIMEOUT_MS: u32 = 100;

fn parse_watchdog_timeout_ms(text: &str) -> Result<u32, String> {
    let ms: u32 = text.parse().map_err(|_| format!("'{text}' is not a number of milliseconds"))?;
    if ms != 0 && !(MIN_WATCHDOG_TIMEOUT_MS..=MAX_WATCHDOG_TIMEOUT_MS).contains(&ms) {
        return Err(format!("must be 0 (the kernel's default) or {MIN_WATCHDOG_TIMEOUT_MS} to {MAX_WATCHDOG_TIMEOUT_MS}, got {ms}"));
    }
    Ok(ms)
}

/// Smallest stats interval accepted, in seconds.
pub const MIN_STATS_INTERVAL_S: f64 = 0.1;
/// How often the statistics are read for the exporters and the monitor socket, in seconds
/// (more often when `--stats` asks for it).
pub const SAMPLE_INTERVAL_S: f64 = 1.0;

impl CommonOpts {
    /// How often to read the statistics: once a second, or at the `--stats` interval when
    /// that is shorter.
    pub fn sample_interval_s(&self) -> f64 {
        self.stats.map_or(SAMPLE_INTERVAL_S, |s| s.min(SAMPLE_INTERVAL_S))
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

    #[test]
    fn watchdog_timeout_parsing() {
        assert_eq!(parse_watchdog_timeout_ms("0"), Ok(0));
        assert_eq!(parse_watchdog_timeout_ms("500"), Ok(500));
        assert!(parse_watchdog_timeout_ms("1").unwrap_err().contains("100 to 30000"));
        assert!(parse_watchdog_timeout_ms("40000").is_err());
        assert!(parse_watchdog_timeout_ms("x").is_err());
    }
}
