//! Writes the 200 tools of the definitions benchmark, once per framework,
//! into `OUT_DIR`.

use std::fmt::Write;
use std::path::PathBuf;

/// How many tools the definitions benchmark builds and lists.
const TOOLS: usize = 200;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let write = |name: &str, text: String| {
        std::fs::write(out.join(name), text).expect("OUT_DIR is writable");
    };
    write("ours_200.rs", peers_generator::ours(TOOLS));
    write("rmcp_200.rs", peers_generator::rmcp(TOOLS, "Rmcp200"));
    let mut rig = peers_generator::rig(TOOLS);
    rig.push_str(
        "\n/// Every tool above as one of rig's handlers.\npub fn handlers() -> Vec<rig_core::serve::ErasedHandler> {\n    vec![\n",
    );
    for index in 0..TOOLS {
        let tool = peers_generator::rig_struct(index);
        writeln!(
            rig,
            "        rig_core::serve::ErasedHandler::new(rig_core::serve::adapters::ToolAdapter::new({tool})),"
        )
        .expect("writing to a String");
    }
    rig.push_str("    ]\n}\n");
    write("rig_200.rs", rig);
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=generator/src/lib.rs");
}
