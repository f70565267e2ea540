//! The bounds of the MCP server over streamable HTTP, one module per
//! rule: the connections one client holds (`connections`), the sessions a server keeps and who gets one when it is full
//! (`session_bound`, `session_room`), the requests a session answers at
//! once and what a request dropped or panicking gives back (`in_flight`,
//! `dropped_requests`), each client's share of the server-wide permits in
//! its sessions (`fair_share`) and outside them (`sessionless_bound`,
//! `sessionless_in_sessions`, `sessionless_clients`).
//!
//! One binary, the server and its clients written once in `support`:
//! every test serves its own server on a loopback port of its own, and
//! changes nothing of the process (no environment, no limits), so the
//! tests run side by side.

#[path = "../../raw_http.rs"]
mod raw_http;
mod support;

mod connections;
mod dropped_requests;
mod fair_share;
mod in_flight;
mod session_bound;
mod session_room;
mod session_tasks;
mod sessionless_bound;
mod sessionless_clients;
mod sessionless_in_sessions;
