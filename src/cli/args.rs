//! Command-line arguments: `--flag value` pairs and bare switches, shared by the commands
//! and the benchmarks.

use super::error::CliError;

/// Parsed `--flag value` pairs and bare flags, in order.
pub struct Args {
    pairs: Vec<(String, Option<String>)>,
}

/// Flags that take no value.
const SWITCHES: &[&str] = &[
    "--json",
    "--no-python",
    "--quick",
    "--help",
    "--players",
    "--syntactic",
    "--semantic",
];

impl Args {
    pub fn parse(raw: &[String]) -> Result<Self, CliError> {
        let mut pairs = Vec::new();
        let mut iter = raw.iter();
        while let Some(flag) = iter.next() {
            if !flag.starts_with("--") {
                return Err(CliError::usage(format!("unexpected argument {flag:?}")));
            }
            if SWITCHES.contains(&flag.as_str()) {
                pairs.push((flag.clone(), None));
            } else {
                let value = iter
                    .next()
                    .ok_or_else(|| CliError::usage(format!("{flag} needs a value")))?;
                pairs.push((flag.clone(), Some(value.clone())));
            }
        }
        Ok(Self { pairs })
    }

    /// Errors on any flag not in `known`, so typos are not silently ignored.
    pub fn only(&self, known: &[&str]) -> Result<(), CliError> {
        match self
            .pairs
            .iter()
            .find(|(f, _)| !known.contains(&f.as_str()))
        {
            Some((f, _)) => Err(CliError::usage(format!("unknown option {f}"))),
            None => Ok(()),
        }
    }

    pub fn value(&self, flag: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(f, _)| f == flag)
            .and_then(|(_, v)| v.as_deref())
    }

    pub fn values(&self, flag: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(f, _)| f == flag)
            .filter_map(|(_, v)| v.as_deref())
            .collect()
    }

    pub fn has(&self, flag: &str) -> bool {
        self.pairs.iter().any(|(f, _)| f == flag)
    }

    pub fn required(&self, flag: &str) -> Result<&str, CliError> {
        self.value(flag)
            .ok_or_else(|| CliError::usage(format!("missing required option {flag}")))
    }

    pub fn parsed<T: std::str::FromStr>(&self, flag: &str, default: T) -> Result<T, CliError> {
        match self.value(flag) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| CliError::usage(format!("invalid value {v:?} for {flag}"))),
        }
    }
}
