//! The packages a study goes out in: the JATOS archive and a static site from the built app's files
//! ([`package`]), the archive JATOS imports ([`jatos_archive`]), and which build of the app a
//! package carries ([`build_record`]).

pub mod build_record;
pub mod jatos_archive;
pub mod package;
