//! The integration tests, as one test binary (one link instead of one per suite; `cargo test
//! --test integration NAME::` runs one suite, as `cargo test --test integration properties::`).
//!
//! - `vectors`: the shared conformance vectors of `tests/vectors/`.
//! - `cli`: the built `nudge-rules` binary (exit codes, stdout, stderr).
//! - `properties`: property tests (proptest).
//! - `quiet_zone_mutations`: mangled URLs inside quiet zones never fire.
//! - `browser_reading`: docs/contract/urls.md step 6 against the `url` crate's WHATWG parser.
//! - `wpt_urls`: the web-platform-tests URL data through the normalizer.
//! - `limits`: every limit at its edge and one past it.
//! - `common`: helpers shared by the suites.

mod browser_reading;
mod cli;
mod common;
mod limits;
mod properties;
mod quiet_zone_mutations;
mod vectors;
mod wpt_urls;
