//! The study's results as one ZIP: each stored submission as the file it came as
//! (`submissions/000001-answers.json`, withdrawal notices too), which the Analysis page and
//! `clozelab results` read as they read a folder of a server's saved bundles or JATOS's export.

use std::io::Write;

use super::store::{Store, StoreError};

/// The ZIP of every submission `store` holds, oldest first.
pub fn results_zip(store: &Store) -> Result<Vec<u8>, StoreError> {
    let zip_error =
        |e: zip::result::ZipError| StoreError::Sqlite(format!("cannot write the ZIP: {e}"));
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::FileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for submission in store.submissions()? {
        let name = format!("submissions/{:06}-{}.json", submission.seq, submission.kind);
        zip.start_file(name, options).map_err(zip_error)?;
        zip.write_all(submission.body.as_bytes())
            .map_err(|e| StoreError::Sqlite(format!("cannot write the ZIP: {e}")))?;
    }
    Ok(zip.finish().map_err(zip_error)?.into_inner())
}
