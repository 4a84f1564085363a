//! Help and advice, all read from the verb table ([`super::spec`]):
//! `ptybroker --help`, each verb's `--help`, `ptybroker help [VERB|agents]`,
//! `ptybroker completions SHELL`, and the advice added to a usage error
//! (the closest verb or option to a misspelt one, `--` before text that
//! starts with `-`, `--replace` for a busy session name), folded into the
//! error's one line (seed 002: one line on stderr per call).

use super::output::out;
use super::spec::{self, OptSpec, VerbSpec, COMMON, EXIT_CODE, VERBS};
use super::{complete, usage, Failure, Opt};

const ABOUT: &str = "\
ptybroker: keep interactive terminal programs alive in pseudo-terminals and
drive them from one-shot calls (LLM agents, scripts, CI).";

/// `ptybroker --help`: every verb, the common options, where to read on.
pub fn global() -> String {
    let mut s = format!("{ABOUT}\n\nUsage: ptybroker VERB [options] [ARGS]\n\nVerbs:\n");
    let width = VERBS.iter().map(|v| v.name.len()).max().unwrap_or(0);
    for v in VERBS {
        column(&mut s, v.name, width, v.summary);
    }
    s.push_str("\nCommon options of the client verbs (start to record):\n");
    let mut common: Vec<OptSpec> = COMMON.to_vec();
    common.push(EXIT_CODE);
    options(&mut s, &common);
    s.push_str(
        "
`ptybroker VERB --help` shows a verb's usage, options and an example;
`ptybroker help agents` is a short guide for agents using the CLI through a
shell. Every client call prints one status line on stderr. Usage errors exit
2, errors from the daemon 1. See ptybroker(1).
",
    );
    s
}

/// `ptybroker VERB --help`.
pub fn verb(v: &VerbSpec) -> String {
    let mut s = format!("Usage: ptybroker {}\n\n", v.usage);
    wrap(
        &mut s,
        String::new(),
        0,
        &format!("{}.", capitalized(v.summary)),
    );
    s.push_str("\nOptions:\n");
    let mut list: Vec<OptSpec> = v.options.to_vec();
    list.push(spec::flag("help", "print this help").short('h'));
    options(&mut s, &list);
    if v.common && v.accepted().len() > v.options.len() {
        s.push_str(
            "The other common options (ptybroker --help) are accepted and change nothing.\n",
        );
    }
    if v.usage.contains("[--]") {
        s.push_str("Put -- before a TEXT that starts with -.\n");
    }
    s.push_str(&format!("\nExample:\n  {}\n", v.example));
    s
}

fn options(s: &mut String, list: &[OptSpec]) {
    let width = list.iter().map(|o| o.synopsis().len()).max().unwrap_or(0);
    for o in list {
        column(s, &o.synopsis(), width, o.help);
    }
}

/// `  NAME  TEXT`, NAME padded to `width` and TEXT wrapped at 80 columns
/// under itself.
fn column(s: &mut String, name: &str, width: usize, text: &str) {
    wrap(s, format!("  {name:width$}  "), width + 4, text);
}

fn capitalized(text: &str) -> String {
    let mut c = text.chars();
    c.next()
        .map(|first| first.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// `text` after `first`, wrapped at 80 columns, `indent` spaces before each
/// following line.
fn wrap(s: &mut String, first: String, indent: usize, text: &str) {
    let mut line = first;
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > 80 {
            s.push_str(line.trim_end());
            s.push('\n');
            line = " ".repeat(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    s.push_str(line.trim_end());
    s.push('\n');
}

/// The `help` verb: `help`, `help VERB`, `help agents`.
pub fn help(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut topic: Option<String> = None;
    while let Some(arg) = Opt::next(p)? {
        match arg {
            Opt::Value(_) if topic.is_none() => topic = Some(arg.text()?),
            _ => return Err(arg.unexpected()),
        }
    }
    match topic.as_deref() {
        None => out(&global()),
        Some("agents") => out(&crate::guide::agents()),
        Some(name) => match spec::find(name) {
            Some(v) => out(&verb(v)),
            None => Err(unknown_verb(name)),
        },
    }
}

/// The `completions` verb.
pub fn completions(p: &mut lexopt::Parser) -> Result<(), Failure> {
    let mut shell: Option<String> = None;
    while let Some(arg) = Opt::next(p)? {
        match arg {
            Opt::Value(_) if shell.is_none() => shell = Some(arg.text()?),
            _ => return Err(arg.unexpected()),
        }
    }
    let script = match shell.as_deref() {
        Some("bash") => complete::bash(),
        Some("zsh") => complete::zsh(),
        Some("fish") => complete::fish(),
        Some(other) => {
            return Err(usage(format!(
                "no completions for {other:?}: bash, zsh or fish"
            )))
        }
        None => return Err(usage("completions wants a shell: bash, zsh or fish")),
    };
    out(&script)
}

/// A verb that is not in the table.
pub fn unknown_verb(name: &str) -> Failure {
    let names = VERBS.iter().map(|v| v.name).chain(["agents"]);
    let hint = match closest(name, names) {
        Some(c) => format!("; did you mean {c}?"),
        None => String::new(),
    };
    usage(format!(
        "unknown command {name:?}{hint} (see ptybroker --help)"
    ))
}

/// A verb's failure with the advice that goes with it: for a usage error
/// the nearest option or `--`, and where the verb's help is; for a busy
/// session name, `--replace` beside seed 002's `stop it first`. Always in
/// the one line the failure prints.
pub fn advise(v: &VerbSpec, mut f: Failure) -> Failure {
    // (A quiet failure is `--exit-code` passing on the program's status,
    // 2 among them: no usage error.)
    if f.exit == 2 && !f.message.is_empty() {
        if let Some(bad) = f.message.strip_prefix("unexpected option ") {
            let bad = bad.to_string();
            let longs: Vec<String> = v
                .accepted()
                .iter()
                .map(|o| format!("--{}", o.long))
                .collect();
            let near = if bad.starts_with("--") {
                closest(&bad, longs.iter().map(String::as_str))
            } else {
                None
            };
            if let Some(near) = near {
                f.message.push_str(&format!("; did you mean {near}?"));
            } else if v.takes_text {
                f.message.push_str(&format!(
                    "; text that starts with - goes after --: ptybroker {} -- {bad}",
                    v.name
                ));
            }
        }
        if !f.message.contains("(see ptybroker") {
            f.message
                .push_str(&format!(" (see ptybroker {} --help)", v.name));
        }
    } else if f.exit == 1 && v.name == "start" && busy(&f.message) {
        // Seed 002's words stay; the other way out joins them.
        f.message = f.message.replace(
            STOP_FIRST,
            "(stop it first, or start --replace to start afresh)",
        );
    }
    f
}

/// How the daemon's refusal of a name in use ends (`manager::Error::Running`).
const STOP_FIRST: &str = "(stop it first)";

/// The daemon's refusal of a name in use (`manager::Error::Running`).
fn busy(message: &str) -> bool {
    message.starts_with("session ")
        && message.contains(" already running for ")
        && message.ends_with(STOP_FIRST)
}

/// The candidate nearest to `word`, if one is near enough to be what was
/// meant: at most one edit in three letters (a swap of two neighbours is
/// one edit), or `word` a start of only that candidate.
fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&str> = candidates.collect();
    let prefixed: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|c| word.len() >= 3 && c.starts_with(word))
        .collect();
    if let [only] = prefixed.as_slice() {
        return Some(only);
    }
    let limit = (word.trim_start_matches('-').chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance with transpositions (optimal string alignment).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_find_what_was_meant_and_nothing_else() {
        let verbs = || VERBS.iter().map(|v| v.name);
        assert_eq!(closest("strat", verbs()), Some("start"));
        assert_eq!(closest("stpe", verbs()), Some("step"));
        assert_eq!(closest("kill", verbs()), Some("kill-session"));
        assert_eq!(closest("lst", verbs()), Some("list"));
        assert_eq!(closest("frobnicate", verbs()), None);
        let opts = ["--match", "--max-wait", "--session"];
        assert_eq!(closest("--macth", opts.into_iter()), Some("--match"));
        assert_eq!(closest("--sesion", opts.into_iter()), Some("--session"));
        assert_eq!(closest("--ma", opts.into_iter()), None);
        assert_eq!(closest("--zzz", opts.into_iter()), None);
    }

    #[test]
    fn distance_counts_a_swap_as_one() {
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("abc", "acb"), 1);
        assert_eq!(distance("", "ab"), 2);
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn every_verb_has_an_example_that_names_it_and_fits_80_columns() {
        for v in VERBS {
            assert!(
                v.example.starts_with(&format!("ptybroker {}", v.name))
                    || v.example.contains(&format!("ptybroker {}", v.name)),
                "{}: {}",
                v.name,
                v.example
            );
            assert!(v.usage.starts_with(v.name), "{}", v.usage);
            for line in verb(v).lines() {
                assert!(line.chars().count() <= 80, "{}: too wide: {line:?}", v.name);
            }
        }
        for line in global().lines() {
            assert!(line.chars().count() <= 80, "too wide: {line:?}");
        }
    }
}
