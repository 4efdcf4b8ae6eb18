//! The packages a study goes out in: the JATOS archive and a static site from the built app's files
//! ([`package`]), the archive JATOS imports ([`jatos_archive`]), and which build of the app a
//! package carries ([`build_record`]); where a website's answers go, or why it is refused
//! ([`destination`]).

pub mod build_record;
pub mod destination;
pub mod jatos_archive;
pub mod package;
