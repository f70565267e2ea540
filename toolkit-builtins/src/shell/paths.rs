//! The workspace restriction: the paths a command names stay inside the
//! workspace, including those that only exist after expansion (globs that
//! can produce `..`, globs through links that lead out, brace expansions,
//! option values attached to their option such as `-o/abs/path`).

use super::glob::Glob;

use super::guard::{HARMLESS_DEVICES, Refusal, Rule};
use super::words::{Segment, Word, has_glob};
use super::wrappers::{Resolved, is_assignment, resolve};
use crate::sandbox::{Access, SandboxError, Workspace};

/// The most directory entries a glob may be checked against.
const MAX_GLOB_ENTRIES: usize = 10_000;

/// The most words a brace expansion may be checked as.
const MAX_BRACE_WORDS: usize = 256;

/// Refuse `..`, `~` and absolute paths outside the workspace.
pub(crate) fn check_paths(segment: &Segment, workspace: &Workspace) -> Result<(), Refusal> {
    let refuse = |path: &str, reason: &str| Refusal {
        rule: Rule::OutsideWorkspace,
        detail: format!("`{path}` {reason}; use paths inside the workspace"),
    };
    // The program names (the first word and the command past any wrapper)
    // may be absolute paths to system programs; their arguments may not.
    let resolved = resolve(&segment.words);
    let command_at = match &resolved {
        Resolved::Runs(command) => Some(command.at),
        _ => None,
    };
    if let Resolved::Runs(command) = &resolved
        && matches!(command.name.as_str(), "cd" | "pushd" | "popd")
    {
        let operands: Vec<&Word> = command
            .args
            .iter()
            .filter(|a| !(a.text.starts_with('-') && a.text.len() > 1) || a.text == "--")
            .filter(|a| a.text != "--")
            .collect();
        if command.name == "popd" || operands.is_empty() || operands[0].text == "-" {
            return Err(refuse(
                &segment.normalized(),
                "goes to a directory the text does not show (the home directory or the last one)",
            ));
        }
    }
    for target in written_targets(segment, &resolved) {
        if target.expanded_start {
            return Err(refuse(
                &target.text,
                "is written to, and its place is only known when the command runs",
            ));
        }
    }
    let first = segment.words.iter().position(|w| !is_assignment(w));
    let words = segment
        .words
        .iter()
        .enumerate()
        .map(|(i, w)| (w, Some(i) == command_at || Some(i) == first));
    let targets = segment.redirects.iter().map(|r| (&r.target, false));
    for (word, is_command) in words.chain(targets) {
        for path in candidates(word, is_command) {
            if let Some(reason) = outside(&path, word.dynamic, is_command, workspace) {
                return Err(refuse(&path, reason));
            }
        }
        if is_command {
            continue;
        }
        if word.brace {
            let Some(expanded) = expand_braces(&word.pattern) else {
                return Err(refuse(
                    &word.text,
                    "is a brace expansion too large to check",
                ));
            };
            for pattern in expanded {
                let text = unescape(&pattern);
                for path in candidates(&Word::literal(&text), false) {
                    if let Some(reason) = outside(&path, word.dynamic, false, workspace) {
                        return Err(refuse(&word.text, reason));
                    }
                }
                if has_glob(&pattern)
                    && let Some(reason) = glob_leads_out(&pattern, workspace)
                {
                    return Err(refuse(&word.text, reason));
                }
            }
        } else if let Some(pattern) = &word.glob
            && let Some(reason) = glob_leads_out(pattern, workspace)
        {
            return Err(refuse(&word.text, reason));
        }
    }
    Ok(())
}

/// The words a segment writes to: redirect targets, and the files of
/// programs that write the files they are given.
fn written_targets<'a>(segment: &'a Segment, resolved: &Resolved<'a>) -> Vec<&'a Word> {
    let mut targets: Vec<&Word> = segment
        .redirects
        .iter()
        .filter(|r| r.writes() && !r.op.ends_with('&'))
        .map(|r| &r.target)
        .collect();
    if let Resolved::Runs(command) = resolved {
        let operands = command
            .args
            .iter()
            .filter(|a| !a.text.starts_with('-') || a.expanded_start);
        match command.name.as_str() {
            "touch" | "tee" | "truncate" | "shred" | "mkdir" | "rm" | "rmdir" | "chmod"
            | "chown" => targets.extend(operands),
            "cp" | "mv" | "install" | "ln" | "rsync" => {
                let mut operands = operands;
                targets.extend(operands.next_back())
            }
            _ => {}
        }
    }
    targets
}

/// The paths a word may name: itself, the value of `--opt=value` or
/// `NAME=value`, and a value attached to a short option (`-o/abs`, `-C..`).
fn candidates(word: &Word, is_command: bool) -> Vec<String> {
    let text = word.text.as_str();
    let mut paths = vec![text.to_owned()];
    if is_command {
        return paths;
    }
    // `file:///etc/passwd` names a path too.
    if let Some(rest) = text.split_once("file://").map(|(_, r)| r) {
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        paths.push(if rest.starts_with('/') {
            rest.to_owned()
        } else {
            format!("/{rest}")
        });
    }
    if let Some((_, value)) = text.split_once('=') {
        paths.push(value.to_owned());
    }
    if text.starts_with('-') && !text.starts_with("--") {
        for (at, c) in text.char_indices().skip(2) {
            if matches!(c, '/' | '~' | '.') {
                paths.push(text[at..].to_owned());
                break;
            }
        }
    }
    paths
}

fn outside(
    path: &str,
    dynamic: bool,
    is_command: bool,
    workspace: &Workspace,
) -> Option<&'static str> {
    if path.starts_with('~') {
        return Some("is in a home directory");
    }
    if dynamic && (path.contains("$HOME") || path.contains("${HOME")) {
        return Some("is in the home directory");
    }
    if path.split('/').any(|part| part == "..") {
        return Some("uses `..`");
    }
    if is_command || HARMLESS_DEVICES.contains(&path) || path.starts_with("/dev/fd/") {
        return None;
    }
    if path.starts_with('/') {
        return match workspace.resolve(path, Access::Write) {
            Ok(_) => None,
            Err(_) => Some("is outside the workspace"),
        };
    }
    // A relative word that names an existing symlink leading out of the
    // workspace (`link/passwd` with `link -> /etc`) is refused too; words
    // that are not paths resolve inside and pass.
    match workspace.resolve(path, Access::Write) {
        Err(SandboxError::Outside { .. }) => Some("leads outside the workspace through a symlink"),
        _ => None,
    }
}

/// Whether a glob may expand to `..` or through a link that leads out of the
/// workspace, judged against the entries that exist now.
fn glob_leads_out(pattern: &str, workspace: &Workspace) -> Option<&'static str> {
    let components = split_unescaped(pattern);
    for component in &components {
        // `.?`, `.[.]`, `.*`, `[.]*` can match `..` (`*` and `?` alone
        // never do, nor does `.env*`).
        if has_glob(component)
            && may_match_a_leading_dot(component)
            && Glob::new(component).matches("..")
        {
            return Some("is a glob that may expand to `..`");
        }
    }
    let root = workspace.root();
    let root_text = escape(&root.display().to_string());
    let relative: Vec<&String> = if pattern.starts_with('/') {
        let Some(rest) = pattern.strip_prefix(&root_text) else {
            // Absolute globs elsewhere are refused as paths outside.
            return None;
        };
        if !rest.is_empty() && !rest.starts_with('/') {
            return None;
        }
        let skip = split_unescaped(&root_text).len();
        components.iter().skip(skip).collect()
    } else {
        components.iter().collect()
    };
    let mut current = vec![String::new()];
    let mut seen = 0usize;
    for component in relative {
        if component.is_empty() {
            continue;
        }
        if !has_glob(component) {
            let literal = unescape(component);
            for path in &mut current {
                if !path.is_empty() {
                    path.push('/');
                }
                path.push_str(&literal);
            }
            continue;
        }
        let matcher = Glob::new(component);
        let mut next = Vec::new();
        for dir in &current {
            let on_disk = if dir.is_empty() {
                root.to_path_buf()
            } else {
                root.join(dir)
            };
            let Ok(entries) = std::fs::read_dir(on_disk) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > MAX_GLOB_ENTRIES {
                    return Some("is a glob over too many files to check");
                }
                // A name that is not UTF-8 could be neither matched nor
                // resolved as it is.
                let Ok(name) = entry.file_name().into_string() else {
                    return Some(
                        "is a glob over a file name that is not UTF-8, which cannot be checked",
                    );
                };
                if (name.starts_with('.') && !may_match_a_leading_dot(component))
                    || !matcher.matches(&name)
                {
                    continue;
                }
                let path = if dir.is_empty() {
                    name
                } else {
                    format!("{dir}/{name}")
                };
                if let Err(SandboxError::Outside { .. }) = workspace.resolve(&path, Access::Write) {
                    return Some(
                        "is a glob that expands through a symlink leading outside the workspace",
                    );
                }
                next.push(path);
            }
        }
        current = next;
    }
    for path in &current {
        if let Err(SandboxError::Outside { .. }) = workspace.resolve(path, Access::Write) {
            return Some("is a glob that expands through a symlink leading outside the workspace");
        }
    }
    None
}

/// Whether a glob component may match a name that starts with a dot: only
/// a literal dot matches one, or in some shells a bracket expression.
fn may_match_a_leading_dot(component: &str) -> bool {
    component.starts_with('.') || component.starts_with("\\.") || component.starts_with('[')
}

/// `pattern` split at unescaped `/`.
fn split_unescaped(pattern: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let last = parts.last_mut().expect("never empty");
                last.push('\\');
                if let Some(next) = chars.next() {
                    last.push(next);
                }
            }
            '/' => parts.push(String::new()),
            _ => parts.last_mut().expect("never empty").push(c),
        }
    }
    parts
}

fn escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "*?[]{},\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn unescape(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Every word a brace expansion makes, as patterns; `None` when there are
/// too many or a sequence (`{a..z}`) is one the filter does not expand.
pub(crate) fn expand_braces(pattern: &str) -> Option<Vec<String>> {
    let mut done = Vec::new();
    let mut pending = vec![pattern.to_owned()];
    while let Some(word) = pending.pop() {
        if done.len() + pending.len() > MAX_BRACE_WORDS {
            return None;
        }
        let Some((open, close, parts)) = first_brace(&word) else {
            done.push(word);
            continue;
        };
        let (prefix, suffix) = (&word[..open], &word[close + 1..]);
        if open == close {
            return None;
        }
        let alternatives = match parts {
            Some(parts) => parts,
            None => sequence(&word[open + 1..close])?,
        };
        for alternative in alternatives {
            pending.push(format!("{prefix}{alternative}{suffix}"));
        }
    }
    Some(done)
}

/// The first expanding `{…}`: its byte range and its comma-separated parts
/// (`None` for a `..` sequence).
fn first_brace(word: &str) -> Option<(usize, usize, Option<Vec<String>>)> {
    let bytes = word.as_bytes();
    let mut i = 0;
    let mut tried = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'{' => {
                // Bounded work: past a few dozen openings the word is given
                // up on (an empty range, which `expand_braces` reports).
                tried += 1;
                if tried > 64 {
                    return Some((i, i, None));
                }
                let mut depth = 0usize;
                let mut parts = Vec::new();
                let mut start = i + 1;
                let mut j = i;
                let mut commas = false;
                while j < bytes.len() {
                    match bytes[j] {
                        b'\\' => j += 1,
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                parts.push(word[start..j].to_owned());
                                if commas {
                                    return Some((i, j, Some(parts)));
                                }
                                if word[i + 1..j].contains("..") {
                                    return Some((i, j, None));
                                }
                                break;
                            }
                        }
                        b',' if depth == 1 => {
                            commas = true;
                            parts.push(word[start..j].to_owned());
                            start = j + 1;
                        }
                        _ => {}
                    }
                    j += 1;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// `{1..5}`, `{a..e}`, `{1..9..2}`: the words of a sequence, if it is one.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    let (from, to) = match parts.as_slice() {
        [a, b] | [a, b, _] => (*a, *b),
        _ => return Some(vec![format!("{{{inner}}}")]),
    };
    if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        let count = a.abs_diff(b);
        if count > MAX_BRACE_WORDS as u64 {
            return None;
        }
        let (low, high) = (a.min(b), a.max(b));
        return Some((low..=high).map(|n| n.to_string()).collect());
    }
    let (mut a, mut b) = (from.chars(), to.chars());
    match (a.next(), a.next(), b.next(), b.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let (low, high) = (x.min(y), x.max(y));
            Some((low..=high).map(|c| c.to_string()).collect())
        }
        // Not a sequence: the shell leaves it as written.
        _ => Some(vec![format!("\\{{{inner}\\}}")]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_like_the_shell() {
        let mut words = expand_braces("a{b,c{d,e}}f").unwrap();
        words.sort();
        assert_eq!(words, ["abf", "acdf", "acef"]);
        let mut dots = expand_braces("{.,x}./s").unwrap();
        dots.sort();
        assert_eq!(dots, ["../s", "x./s"]);
        assert_eq!(expand_braces("x{1..3}").unwrap().len(), 3);
        assert!(expand_braces("{1..100000}").is_none());
    }
}
