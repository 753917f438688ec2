//! Test support for floe: a reference joint-state search that is independent of the CBS solver,
//! and small random instances.

pub mod joint;
pub mod random;
