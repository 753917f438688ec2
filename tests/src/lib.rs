//! Test support for floe: a reference joint-state search that is independent of the CBS solver.

pub mod joint;
