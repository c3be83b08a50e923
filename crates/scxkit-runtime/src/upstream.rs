//! Upstream's option names. scxkit's schedulers share their names with the schedulers of
//! sched-ext/scx, and the configurations written for those (`/etc/default/scx`, scx_loader's
//! presets, distributions' defaults) pass upstream's options. A scheduler accepts upstream's
//! spelling of what it does itself as clap aliases in its own options; the upstream options
//! it does not implement are declared here, as data, and refused by name before anything is
//! loaded, with scxkit's nearest equivalent or the reason there is none.
//!
//! ```ignore
//! const UPSTREAM_ONLY: &[Unsupported] = &[Unsupported::flag("partial", Some('p'), Instead::Nothing("..."))];
//! let opts: Opts = scxkit_runtime::upstream::parse(UPSTREAM_ONLY);
//! ```

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command, Parser};
use std::ffi::OsString;

/// What scxkit offers in place of an upstream option it does not implement.
#[derive(Debug, Clone, Copy)]
pub enum Instead {
    /// The nearest scxkit option, and how it differs.
    Nearest(&'static str),
    /// There is none; why, or what scxkit does instead.
    Nothing(&'static str),
}

/// An upstream option that a scheduler here does not implement.
#[derive(Debug, Clone, Copy)]
pub struct Unsupported {
    /// Upstream's long name, without the dashes.
    pub long: &'static str,
    pub short: Option<char>,
    /// Whether it takes a value.
    pub takes_value: bool,
    /// Values that ask for what scxkit does anyway (upstream's "off"): accepted, ignored.
    pub same_as_scxkit: &'static [&'static str],
    pub instead: Instead,
}

impl Unsupported {
    pub const fn flag(long: &'static str, short: Option<char>, instead: Instead) -> Unsupported {
        Unsupported { long, short, takes_value: false, same_as_scxkit: &[], instead }
    }

    pub const fn value(long: &'static str, short: Option<char>, instead: Instead) -> Unsupported {
        Unsupported { long, short, takes_value: true, same_as_scxkit: &[], instead }
    }

    /// Accepts these values (and ignores them): they ask for what scxkit does anyway.
    pub const fn same_as_scxkit_for(self, values: &'static [&'static str]) -> Unsupported {
        Unsupported { same_as_scxkit: values, ..self }
    }

    /// How a user would have written it: `-p/--partial` or `--partial`.
    pub fn spelling(&self) -> String {
        match self.short {
            Some(short) => format!("-{short}/--{}", self.long),
            None => format!("--{}", self.long),
        }
    }

    /// The message that refuses it in `scheduler`.
    pub fn refusal(&self, scheduler: &str) -> String {
        let spelled = self.spelling();
        match self.instead {
            Instead::Nearest(nearest) => format!(
                "{scheduler} does not implement upstream's {spelled}; the nearest scxkit option: {nearest}. Nothing was loaded"
            ),
            Instead::Nothing(why) => format!(
                "{scheduler} does not implement upstream's {spelled}, and scxkit has no equivalent: {why}. Nothing was loaded"
            ),
        }
    }

    /// A hidden clap argument of the same shape, so that the rest of the line still parses.
    fn hidden_arg(&self) -> Arg {
        let arg = Arg::new(self.long).long(self.long).hide(true);
        let arg = match self.short {
            Some(short) => arg.short(short),
            None => arg,
        };
        if self.takes_value {
            arg.num_args(1).allow_hyphen_values(true).action(ArgAction::Append)
        } else {
            arg.action(ArgAction::Count)
        }
    }

    /// Whether the command line asked for something scxkit does not do.
    fn asked_for(&self, matches: &ArgMatches) -> bool {
        if matches.value_source(self.long) != Some(ValueSource::CommandLine) {
            return false;
        }
        if !self.takes_value {
            return true;
        }
        let values = matches.get_many::<String>(self.long).into_iter().flatten();
        values.into_iter().any(|v| !self.same_as_scxkit.contains(&v.as_str()))
    }
}

/// Options of upstream's libbpf set, which every upstream scheduler takes.
pub const LIBBPF_OPTIONS: &[Unsupported] = &[
    Unsupported::value("relaxed-maps", None, Instead::Nothing("scxkit's BPF objects are built with the schedulers and always loaded strictly")),
    Unsupported::value("pin-root-path", None, Instead::Nothing("scxkit pins no map")),
    Unsupported::value("kconfig", None, Instead::Nothing("the kernel's own configuration is read")),
    Unsupported::value("btf-custom-path", None, Instead::Nothing("relocations use the running kernel's BTF, /sys/kernel/btf/vmlinux")),
    Unsupported::value("bpf-token-path", None, Instead::Nothing("the scheduler runs as root, without a BPF token")),
];

/// Parses the command line into `T`, refusing the upstream options of `unsupported` (and
/// [`LIBBPF_OPTIONS`]) by name. On a bad option it prints clap's error and exits with 2.
pub fn parse<T: Parser>(unsupported: &[Unsupported]) -> T {
    try_parse_from(unsupported, std::env::args_os()).unwrap_or_else(|e| e.exit())
}

/// [`parse`] on the given arguments (the first is the program's name), for tests.
pub fn try_parse_from<T, I, S>(unsupported: &[Unsupported], args: I) -> Result<T, clap::Error>
where
    T: Parser,
    I: IntoIterator<Item = S>,
    S: Into<OsString> + Clone,
{
    let refused: Vec<&Unsupported> = unsupported.iter().chain(LIBBPF_OPTIONS).collect();
    let mut command = crate::docs::scheduler_command(with_hidden_args(T::command(), &refused));
    let matches = command.try_get_matches_from_mut(args)?;
    crate::docs::exit_if_asked::<T>(&matches);
    if let Some(option) = refused.iter().find(|u| u.asked_for(&matches)) {
        let message = option.refusal(command.get_name());
        return Err(command.error(ErrorKind::ArgumentConflict, message));
    }
    T::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

fn with_hidden_args(command: Command, refused: &[&Unsupported]) -> Command {
    refused.iter().fold(command, |command, option| command.arg(option.hidden_arg()))
}

/// One line of an option-set fixture: `scheduler | expected | arguments | where from`,
/// where `expected` is `ok` or `refused TEXT` (the refusal must contain TEXT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSet {
    pub scheduler: String,
    /// None: accepted; Some(text): refused with a message containing text.
    pub refused_with: Option<String>,
    pub args: Vec<String>,
    pub source: String,
}

/// Reads the option sets of `scheduler` from a fixture (blank lines and `#` comments skipped).
pub fn option_sets(fixture: &str, scheduler: &str) -> Vec<OptionSet> {
    fixture
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(parse_option_set)
        .filter(|set| set.scheduler == scheduler)
        .collect()
}

fn parse_option_set(line: &str) -> OptionSet {
    let fields: Vec<&str> = line.split('|').map(str::trim).collect();
    assert!(fields.len() == 4, "option set '{line}': expected 'scheduler | expected | arguments | source'");
    let refused_with = match fields[1] {
        "ok" => None,
        other => Some(
            other.strip_prefix("refused ").unwrap_or_else(|| panic!("option set '{line}': expected 'ok' or 'refused TEXT'")).to_string(),
        ),
    };
    OptionSet {
        scheduler: fields[0].to_string(),
        refused_with,
        args: fields[2].split_whitespace().map(String::from).collect(),
        source: fields[3].to_string(),
    }
}

/// Runs each option set of `scheduler` through `check` (parse and every check made before
/// loading) and returns a line for each that was not accepted or refused as expected.
pub fn mismatches(fixture: &str, scheduler: &str, check: impl Fn(&[String]) -> Result<(), String>) -> Vec<String> {
    let sets = option_sets(fixture, scheduler);
    assert!(!sets.is_empty(), "the fixture has no option set for {scheduler}");
    sets.iter().filter_map(|set| mismatch(set, check(&set.args))).collect()
}

fn mismatch(set: &OptionSet, outcome: Result<(), String>) -> Option<String> {
    let line = format!("{} {} ({})", set.scheduler, set.args.join(" "), set.source);
    match (&set.refused_with, outcome) {
        (None, Ok(())) => None,
        (None, Err(e)) => Some(format!("{line}: expected to be accepted, refused: {e}")),
        (Some(text), Ok(())) => Some(format!("{line}: expected to be refused ({text}), accepted")),
        (Some(text), Err(e)) if e.contains(text.as_str()) => None,
        (Some(text), Err(e)) => Some(format!("{line}: expected a refusal naming '{text}', got: {e}")),
    }
}

/// The README's heading of the section with the tables of upstream's options.
const README_SECTION: &str = "### Upstream's options";

/// The options of `unsupported` (and [`LIBBPF_OPTIONS`]) that the README's table for
/// `scheduler` (the lines from `**scheduler**` to the next bold heading or section) does not
/// name: as `--long` in backquotes, or by a wildcard such as `--timely-*`.
pub fn undocumented(readme: &str, scheduler: &str, unsupported: &[Unsupported]) -> Vec<String> {
    let section = readme.split_once(README_SECTION).map_or("", |(_, rest)| rest.split("\n## ").next().unwrap_or(""));
    let table = section.split_once(&format!("**{scheduler}**")).map_or("", |(_, rest)| rest.split("\n**").next().unwrap_or(""));
    let table = table.split("\n#").next().unwrap_or("");
    let named = |text: &str, long: &str| {
        text.contains(&format!("`--{long}`")) || text.split('`').any(|w| w.strip_prefix("--").and_then(|w| w.strip_suffix('*')).is_some_and(|p| long.starts_with(p)))
    };
    let missing_from = |options: &[Unsupported], text: &str| -> Vec<String> {
        options.iter().filter(|u| !named(text, u.long)).map(|u| u.spelling()).collect()
    };
    let mut missing = missing_from(unsupported, table);
    missing.extend(missing_from(LIBBPF_OPTIONS, section));
    missing
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    #[command(name = "scx_test")]
    struct Opts {
        #[arg(short = 's', long, default_value_t = 1)]
        slice_us: u64,
    }

    const UPSTREAM_ONLY: &[Unsupported] = &[
        Unsupported::flag("partial", Some('p'), Instead::Nothing("every task is switched")),
        Unsupported::value("throttle-us", Some('t'), Instead::Nearest("none really")).same_as_scxkit_for(&["0"]),
    ];

    fn parse(args: &[&str]) -> Result<Opts, String> {
        try_parse_from::<Opts, _, _>(UPSTREAM_ONLY, std::iter::once("scx_test").chain(args.iter().copied()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn accepted_options_still_parse_around_refusable_ones() {
        assert_eq!(parse(&["-s", "5"]).unwrap().slice_us, 5);
        assert_eq!(parse(&["-t", "0", "-s", "7"]).unwrap().slice_us, 7, "upstream's 'off' is scxkit's behaviour");
    }

    #[test]
    fn refusals_name_the_upstream_option_and_what_instead() {
        let err = parse(&["-s", "5", "-p"]).unwrap_err();
        assert!(err.contains("scx_test does not implement upstream's -p/--partial, and scxkit has no equivalent: every task is switched"), "{err}");
        let err = parse(&["--throttle-us=100"]).unwrap_err();
        assert!(err.contains("-t/--throttle-us; the nearest scxkit option: none really"), "{err}");
        let err = parse(&["--kconfig", "CONFIG_X=y"]).unwrap_err();
        assert!(err.contains("upstream's --kconfig"), "{err}");
        // A short flag in a cluster is found too.
        assert!(parse(&["-ps", "5"]).unwrap_err().contains("--partial"));
    }

    #[test]
    fn the_readme_table_must_name_each_refused_option() {
        let readme = "## A\n### Upstream's options\n`--relaxed-maps`, `--pin-root-path`, `--kconfig`, `--btf-custom-path`, `--bpf-token-path`\n\
                      **scx_test**\n| `-p`, `--partial` | refused |\n**scx_other**\n| `--throttle-us` |\n## B\n";
        assert_eq!(undocumented(readme, "scx_test", UPSTREAM_ONLY), vec!["-t/--throttle-us"]);
        let wildcard = readme.replace("`--partial`", "`--partial`, `--thr*`");
        assert!(undocumented(&wildcard, "scx_test", UPSTREAM_ONLY).is_empty());
    }

    #[test]
    fn fixture_lines_and_mismatches() {
        let fixture = "# comment\n\nscx_test | ok | -s 5 | docs\nscx_test | refused --partial | -p | preset\nother | ok | -x | y\n";
        let sets = option_sets(fixture, "scx_test");
        assert_eq!(sets.len(), 2);
        assert_eq!(sets[1].refused_with.as_deref(), Some("--partial"));
        let check = |args: &[String]| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            parse(&args).map(|_| ())
        };
        assert!(mismatches(fixture, "scx_test", check).is_empty());
        let wrong = "scx_test | refused --partial | -s 5 | docs\nscx_test | ok | -p | preset\n";
        assert_eq!(mismatches(wrong, "scx_test", check).len(), 2);
    }
}
