//! Every integration test in one binary: linking the crate once instead of once per test file.
//! Each module is one area; `cargo test --test integration <module>::` runs one area.
//!
//! The modules share one process, so anything process-wide is shared too: the Prometheus
//! registry of `skillreg::metrics` (tests assert how much a counter rose, never its value), the
//! environment and the working directory (no test changes either).

mod common;

mod architecture;

mod browse;
mod clawhub;
mod cli;
mod clients;
mod consumers;
mod corpus;
mod crash;
mod events;
mod exposure;
mod fuzz_corpus;
mod hardening;
mod hostile;
mod install;
mod keyless_instance;
mod mcp_protocol;
mod ops;
mod postgres;
mod reliability;
mod requires;
mod rest;
mod signing;
mod signing_certs;
mod signing_keyless;
mod soak;
mod sources;
mod subscriptions;
mod tls;
mod trust;
mod trustpub;
mod usage;
mod walkthrough;
mod web;
