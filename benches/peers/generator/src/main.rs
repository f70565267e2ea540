//! Prints `COUNT` tools written one way, for `scripts/bench_compile.sh`:
//! `peers-generator ours|rmcp|rig COUNT`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(kind), Some(count)) = (args.first(), args.get(1)) else {
        eprintln!("usage: peers-generator ours|rmcp|rig COUNT");
        return ExitCode::from(2);
    };
    let Ok(count) = count.parse::<usize>() else {
        eprintln!("COUNT must be a whole number, not {count:?}");
        return ExitCode::from(2);
    };
    let source = match kind.as_str() {
        "ours" => peers_generator::ours(count),
        "rmcp" => peers_generator::rmcp(count, "Tools"),
        "rig" => peers_generator::rig(count),
        other => {
            eprintln!("unknown kind {other:?}: expected ours, rmcp or rig");
            return ExitCode::from(2);
        }
    };
    print!("{source}");
    ExitCode::SUCCESS
}
