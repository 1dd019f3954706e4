//! The read API over HTTP (SPEC 9).
