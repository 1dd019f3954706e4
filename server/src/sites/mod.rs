//! The sites (docs/contract/server.md "Sites and keys"): what a site is ([`def`]), the sites file ([`mod@file`]), the registry of sites and
//! their served configs ([`registry`]), and API keys ([`keys`]).

pub mod def;
pub mod file;
pub mod keys;
pub mod registry;
