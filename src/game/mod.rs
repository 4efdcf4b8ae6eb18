//! The games and the studies around them, in four parts and the token games: the study and
//! its design ([`design`]), playing a run ([`run`]), results read back into the tables for the
//! paper ([`readback`]), and the packages a study goes out in ([`packages`]); the next-token
//! games ([`tokens`]). Pure Rust; the Leptos pages only wire it to the DOM.

pub mod design;
pub mod packages;
pub mod readback;
pub mod run;
pub mod tokens;
