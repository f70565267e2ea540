//! Benchmarks that compare this SDK with its Rust peers, rmcp and rig, on the
//! same tools in the same run. See `benches/` and `BENCHMARKS.md` at the root
//! of the repository; `scripts/bench_peers.sh` runs them and prints ratios.
