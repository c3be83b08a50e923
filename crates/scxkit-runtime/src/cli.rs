//! Options every scheduler takes, flattened into its own clap parser.

use crate::backends::MetricsOpts;
use crate::exit_info::MAX_EXIT_DUMP_LEN;
use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct CommonOpts {
    /// Print statistics every SECONDS seconds (fractions allowed, e.g. 0.5). Off by default.
    #[arg(long, value_name = "SECONDS", value_parser = parse_interval_s)]
    pub stats: Option<f64>,

    /// Verbose output: debug logs and libbpf's messages while loading (-vv, upstream's
    /// spelling of more verbosity, means the same).
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Print the version, the git commit, and what this kernel offers the scheduler
    /// (sched_ext, the kfuncs it uses), then exit. Needs no root; loads nothing.
    #[arg(short = 'V', long)]
    pub version: bool,

    /// Print the stats line of the scheduler already running, every SECONDS seconds, then
    /// exit when it stops. Needs no root; loads nothing.
    #[arg(long, value_name = "SECONDS", value_parser = parse_interval_s)]
    pub monitor: Option<f64>,

    /// Bytes of the kernel's debug dump to record when it ejects the scheduler on an error
    /// (a stall, say); the dump is printed on exit. 0 is the default, as upstream's.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_EXIT_DUMP_LEN, value_parser = parse_exit_dump_len)]
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

/// Upstream's 0 asks for the kernel's default length.
fn parse_exit_dump_len(text: &str) -> Result<u32, String> {
    let bytes: u32 = text.parse().map_err(|_| format!("'{text}' is not a number of bytes"))?;
    match bytes {
        0 => Ok(DEFAULT_EXIT_DUMP_LEN),
        MIN_EXIT_DUMP_LEN..=MAX_EXIT_DUMP_LEN => Ok(bytes),
        _ => Err(format!("must be 0 (the default, {DEFAULT_EXIT_DUMP_LEN}) or {MIN_EXIT_DUMP_LEN} to {MAX_EXIT_DUMP_LEN}, got {bytes}")),
    }
}

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

/// A scheduler's options, as the runtime sees them: the options every scheduler takes, and
/// one check of its own. The runtime calls [`SchedulerOptions::check`] in one place, after
/// the modes that load nothing (`--version`, `--help-stats`, `--monitor`) and before any
/// check of the kernel or any load.
pub trait SchedulerOptions {
    /// The options every scheduler takes, flattened into its own.
    fn common(&self) -> &CommonOpts;

    /// Refuses what the parser cannot see (options that contradict each other, values out of
    /// a range that depends on another), with a message naming the option.
    fn check(&self) -> anyhow::Result<()>;
}

impl SchedulerOptions for CommonOpts {
    fn common(&self) -> &CommonOpts {
        self
    }

    /// Each common option is checked by its own parser.
    fn check(&self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// Ends the process as clap ends it for a malformed option (the message on stderr, status 2)
/// when a scheduler's own option check failed: a service manager then tells a bad
/// configuration, not worth a restart, from a failure that is.
pub(crate) fn exit_on_bad_options(checked: anyhow::Result<()>) {
    if let Err(e) = checked {
        eprintln!("Error: {e:#}");
        std::process::exit(2);
    }
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
    fn exit_dump_len_parsing() {
        assert_eq!(parse_exit_dump_len("0"), Ok(DEFAULT_EXIT_DUMP_LEN));
        assert_eq!(parse_exit_dump_len("4096"), Ok(4096));
        assert!(parse_exit_dump_len("1").unwrap_err().contains("must be 0"));
        assert!(parse_exit_dump_len("x").is_err());
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
