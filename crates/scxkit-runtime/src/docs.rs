//! Man pages and shell completions, generated from a scheduler's own clap definition, so
//! each page says what `--help` says. Every scheduler parses its command line with
//! [`parse`]: it adds the hidden option `--generate-docs DIR`, with which the binary writes
//! its manual and completions and exits (packaging/build-deb.sh asks every scheduler so).
//! The manual is made from the scheduler's own definition: upstream's spellings that it
//! refuses (crate::upstream) stay out of it.

use anyhow::{Context, Result};
use clap::{value_parser, Arg, ArgAction, ArgMatches, Command, Parser};
use clap_complete::Shell;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

const GENERATE_DOCS: &str = "generate-docs";

/// The manual section of the schedulers: commands for the administrator.
pub const MAN_SECTION: &str = "8";

/// Parses the command line into the scheduler's options `T`, exiting with clap's message
/// and status 2 on a bad option. With `--generate-docs DIR`, writes the man page and the
/// completions under DIR (see [`write_docs`]), prints their paths and exits instead.
/// (A scheduler that refuses upstream's options parses with [`crate::upstream::parse`],
/// which does the same.)
pub fn parse<T: Parser>() -> T {
    let mut command = scheduler_command(T::command());
    let mut matches = command.get_matches_mut();
    exit_if_asked::<T>(&matches);
    T::from_arg_matches_mut(&mut matches).unwrap_or_else(|err| err.format(&mut command).exit())
}

/// With `--generate-docs DIR` on the command line (`matches`), writes `T`'s manual and
/// completions, prints their paths and exits; otherwise returns.
pub(crate) fn exit_if_asked<T: Parser>(matches: &ArgMatches) {
    let Some(dir) = matches.try_get_one::<PathBuf>(GENERATE_DOCS).ok().flatten() else { return };
    match write_docs(T::command(), dir) {
        Ok(written) => {
            written.iter().for_each(|path| println!("{}", path.display()));
            std::process::exit(0);
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::exit(1);
        }
    }
}

/// `command` with the hidden `--generate-docs DIR`.
/// A scheduler's command line as every scheduler parses it: with `--generate-docs`, and a
/// negative number taken as a value, so that `--slice-us -5` is refused naming `--slice-us`
/// (not as an unknown argument '-5').
pub(crate) fn scheduler_command(command: Command) -> Command {
    with_docs_option(command).allow_negative_numbers(true)
}

fn with_docs_option(command: Command) -> Command {
    command.arg(
        Arg::new(GENERATE_DOCS)
            .long(GENERATE_DOCS)
            .value_name("DIR")
            .value_parser(value_parser!(PathBuf))
            .action(ArgAction::Set)
            .exclusive(true)
            .hide(true)
            .help("Write the man page and the bash, zsh and fish completions under DIR, then exit"),
    )
}

/// Writes `DIR/man8/NAME.8` and the completions `DIR/bash/NAME`, `DIR/zsh/_NAME` and
/// `DIR/fish/NAME.fish` (each shell's file name, where Debian installs them), and returns
/// their paths.
pub fn write_docs(mut command: Command, dir: &Path) -> Result<Vec<PathBuf>> {
    command.build();
    let name = command.get_name().to_string();
    let man = dir.join(format!("man{MAN_SECTION}")).join(format!("{name}.{MAN_SECTION}"));
    let mut written = vec![man.clone()];
    let mut file = create(&man)?;
    clap_mangen::Man::new(command.clone())
        .section(MAN_SECTION)
        .manual("scxkit")
        .render(&mut file)
        .with_context(|| format!("writing {}", man.display()))?;
    for (shell, path) in [
        (Shell::Bash, dir.join("bash").join(&name)),
        (Shell::Zsh, dir.join("zsh").join(format!("_{name}"))),
        (Shell::Fish, dir.join("fish").join(format!("{name}.fish"))),
    ] {
        clap_complete::generate(shell, &mut command, &name, &mut create(&path)?);
        written.push(path);
    }
    Ok(written)
}

fn create(path: &Path) -> Result<File> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    File::create(path).with_context(|| format!("creating {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CommonOpts;
    use clap::{CommandFactory, FromArgMatches};

    /// A scheduler's options in miniature.
    #[derive(Debug, Parser)]
    #[command(name = "scx_example")]
    struct Opts {
        /// Time slice, in microseconds.
        #[arg(long, value_name = "US", default_value_t = 5000)]
        slice_us: u64,
        #[command(flatten)]
        common: CommonOpts,
    }

    #[test]
    fn the_manual_and_completions_carry_every_option() {
        let dir = tempfile::tempdir().unwrap();
        let written = write_docs(Opts::command(), dir.path()).unwrap();
        assert_eq!(written.len(), 4);
        let man = fs::read_to_string(dir.path().join("man8/scx_example.8")).unwrap();
        assert!(man.starts_with(".ie"), "roff: {}", &man[..40.min(man.len())]);
        assert!(man.contains(".TH scx_example 8"), "section 8 header");
        for option in ["slice\\-us", "Time slice, in microseconds", "watchdog\\-timeout\\-ms"] {
            assert!(man.contains(option), "{option} missing from the man page");
        }
        let bash = fs::read_to_string(dir.path().join("bash/scx_example")).unwrap();
        assert!(bash.contains("--slice-us") && bash.contains("--stats"));
        assert!(fs::read_to_string(dir.path().join("zsh/_scx_example")).unwrap().contains("--slice-us"));
        assert!(fs::read_to_string(dir.path().join("fish/scx_example.fish")).unwrap().contains("slice-us"));
        assert!(!man.contains("generate\\-docs"), "the generator's own option stays out of the manual");
    }

    #[test]
    fn the_docs_option_is_hidden_and_alone() {
        let mut command = with_docs_option(Opts::command());
        assert!(!command.render_help().to_string().contains("generate-docs"));
        let matches = command.clone().try_get_matches_from(["scx_example", "--generate-docs", "/tmp/x"]).unwrap();
        assert_eq!(matches.get_one::<PathBuf>(GENERATE_DOCS).unwrap(), Path::new("/tmp/x"));
        assert!(command.try_get_matches_from(["scx_example", "--generate-docs", "/tmp/x", "--slice-us", "1"]).is_err());
        let opts = Opts::from_arg_matches(&with_docs_option(Opts::command()).get_matches_from(["scx_example", "--slice-us", "7"])).unwrap();
        assert_eq!(opts.slice_us, 7);
    }
}
