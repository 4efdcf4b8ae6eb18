//! The packages a study goes out in: the JATOS archive and a static site from the built app's files
//! ([`package`]), and the archive JATOS imports ([`jatos_archive`]).

pub mod jatos_archive;
pub mod package;
