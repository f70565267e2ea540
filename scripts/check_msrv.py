#!/usr/bin/env python3
"""Check the MSRV promise without a second toolchain.

The workspace states `rust-version` in Cargo.toml. Two checks keep it true:
clippy's `incompatible_msrv` lint (run by scripts/test.sh with -D warnings)
flags standard-library items newer than the MSRV in our own code, and this
script checks that no package in the dependency graph declares a newer
`rust-version` than ours. What neither can see: a dependency that needs a
newer compiler without declaring it. Only a build with that old toolchain
would catch that, and this machine has one toolchain.
"""
import json
import subprocess
import sys


def version_tuple(text: str) -> tuple:
    """`1.88` and `1.88.0` are the same version: compare three parts."""
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main() -> int:
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    members = set(metadata["workspace_members"])
    ours = {p["rust_version"] for p in metadata["packages"] if p["id"] in members}
    if len(ours) != 1 or None in ours:
        print(f"every workspace member must state the same rust-version, found {ours}")
        return 1
    msrv = ours.pop()
    # Only packages that are built for the workspace count: resolve the graph.
    resolved = {node["id"] for node in metadata["resolve"]["nodes"]}
    too_new = [
        (p["name"], p["version"], p["rust_version"])
        for p in metadata["packages"]
        if p["id"] in resolved
        and p.get("rust_version")
        and version_tuple(p["rust_version"]) > version_tuple(msrv)
    ]
    if too_new:
        print(f"MSRV is {msrv}, but these dependencies need a newer Rust:")
        for name, version, needs in sorted(too_new):
            print(f"  {name} {version} needs {needs}")
        return 1
    print(f"MSRV {msrv}: all {len(resolved)} packages in the graph fit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
