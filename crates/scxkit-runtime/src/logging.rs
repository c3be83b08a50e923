//! One logger for every scheduler: `LEVEL message` lines on stderr, libbpf routed into it.

use libbpf_rs::PrintLevel;
use log::{Level, LevelFilter, Log, Metadata, Record};
use std::io::Write;

struct StderrLogger;

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) {
            let _ = writeln!(std::io::stderr(), "{:<5} {}", record.level(), record.args());
        }
    }

    fn flush(&self) {}
}

static LOGGER: StderrLogger = StderrLogger;

/// Installs the logger; `verbose` also shows libbpf's debug messages.
pub fn init(verbose: bool) {
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(if verbose { LevelFilter::Debug } else { LevelFilter::Info });
    let libbpf_level = if verbose { PrintLevel::Debug } else { PrintLevel::Warn };
    libbpf_rs::set_print(Some((libbpf_level, forward_libbpf)));
}

fn forward_libbpf(level: PrintLevel, msg: String) {
    let level = match level {
        PrintLevel::Warn => Level::Warn,
        PrintLevel::Info => Level::Info,
        PrintLevel::Debug => Level::Debug,
    };
    log::log!(level, "libbpf: {}", msg.trim_end());
}
