//! What `table1 --syntactic/--semantic` and `probes` share: the part-of-speech tagger from the
//! setup's lexicon and GPT-2's word embeddings.

use std::path::Path;

use super::error::CliError;
use super::flags::ClassFlags;
use crate::analysis::classes::{ClassRow, Level, MeaningClusters, PartOfSpeech, class_tvd_rows};
use crate::analysis::dataset::Dataset;
use crate::analysis::table1::Table1Options;
use crate::text::pos::{Lexicon, Tagger};

/// The tagger from the lexicon at `path` (`--lexicon FILE`, default
/// [`super::flags::DEFAULT_LEXICON`]).
pub fn tagger(path: &Path) -> Result<Tagger, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            CliError::Missing(format!(
                "no part-of-speech lexicon at {} (run `npm ci`, or give --lexicon FILE)",
                path.display()
            ))
        } else {
            CliError::io("read", path)(e)
        }
    })?;
    let lexicon =
        Lexicon::from_js(&text).map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
    Ok(Tagger::new(lexicon))
}

/// Syntactic rows (with `--syntactic`) and semantic rows (with `--semantic`, on the embeddings
/// of the `--model`).
pub fn class_rows(
    flags: &ClassFlags,
    data: &Dataset,
    options: &Table1Options,
) -> Result<Vec<ClassRow>, CliError> {
    let mut rows = Vec::new();
    if flags.syntactic {
        let tagger = tagger(&flags.lexicon)?;
        rows.extend(class_tvd_rows(
            data,
            &PartOfSpeech(&tagger),
            Level::Syntactic,
            options,
        )?);
    }
    if flags.semantic {
        let Some(dir) = &flags.model else {
            return Err(CliError::usage(
                "--semantic needs --model DIR: the words' embeddings are GPT-2's",
            ));
        };
        let (engine, _) =
            super::load_engine_from(dir, flags.backend, crate::model::Precision::F32)?;
        let words: Vec<&str> = data.words().into_iter().collect();
        let table = pollster::block_on(engine.embedding_table(&words, 2000, |_, _| true))?
            .unwrap_or_default();
        let clusters = MeaningClusters {
            embed: |w: &str| table.get(w).cloned(),
            seed: options.seed,
        };
        rows.extend(class_tvd_rows(data, &clusters, Level::Semantic, options)?);
    }
    Ok(rows)
}
