//! Reading a model folder from a host, one file at a time, whatever way the folder holds its
//! tokenizer: `tokenizer.json`, else `vocab.json` + `merges.txt`, else OpenAI's `encoder.json` +
//! `vocab.bpe`. The caller's `get` fetches one file and says what came back when it is not the
//! file (an HTML page, a 404, a network error); a folder that has none of the layouts fails
//! naming every file asked for and every answer.

use std::future::Future;

use crate::data::served_file::Answer;
use crate::runtime::engine::{ModelParts, TokenizerFiles};

/// The ways a folder may hold GPT-2's tokenizer, in the order they are asked for.
pub const TOKENIZER_LAYOUTS: [&[&str]; 3] = [
    &["tokenizer.json"],
    &["vocab.json", "merges.txt"],
    &["encoder.json", "vocab.bpe"],
];

/// Why a model folder could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelFolderError {
    /// A file every folder needs is not there.
    #[error("the model folder {base} has no {answer}")]
    Missing { base: String, answer: Answer },
    /// None of the tokenizer's layouts is there.
    #[error(
        "the model folder {base} has no tokenizer (tokenizer.json, vocab.json + merges.txt, or \
         encoder.json + vocab.bpe); asked for {}",
        asked.iter().map(Answer::to_string).collect::<Vec<_>>().join("; ")
    )]
    NoTokenizer { base: String, asked: Vec<Answer> },
    /// The folder's `config.json` describes a model clozelab does not run (found before the
    /// weights are downloaded).
    #[error("the model folder {base}: {error}")]
    Config {
        base: String,
        error: crate::model::ConfigError,
    },
    /// The weights are not there as safetensors.
    #[error(
        "the model folder {base} has no {answer}. clozelab reads weights from model.safetensors \
         only; a revision that holds pytorch_model.bin alone can be saved as safetensors with \
         transformers (docs/researchers.md, Models)"
    )]
    NoSafetensors { base: String, answer: Answer },
}

fn answer(file: &str, what_came_back: impl Into<String>) -> Answer {
    Answer {
        file: file.to_string(),
        what_came_back: what_came_back.into(),
    }
}

/// Reads `config.json`, the tokenizer and `model.safetensors` from the folder at `base`
/// (named in errors only), asking `get(file)` for each file in turn; `get` answers the file's
/// bytes, or what came back instead.
pub async fn read_model_folder<G, F>(base: &str, mut get: G) -> Result<ModelParts, ModelFolderError>
where
    G: FnMut(&'static str) -> F,
    F: Future<Output = Result<Vec<u8>, String>>,
{
    let missing = |file: &str, what: String| ModelFolderError::Missing {
        base: base.to_string(),
        answer: answer(file, what),
    };
    let config = get("config.json")
        .await
        .map_err(|what| missing("config.json", what))?;
    let config_json =
        String::from_utf8(config).map_err(|_| missing("config.json", "not UTF-8 text".into()))?;
    // Refused before the tokenizer and the weights (hundreds of MB) are asked for.
    crate::model::TransformerConfig::from_hf_json(&config_json).map_err(|error| {
        ModelFolderError::Config {
            base: base.to_string(),
            error,
        }
    })?;
    let mut asked = Vec::new();
    let mut tokenizer = None;
    'layouts: for layout in TOKENIZER_LAYOUTS {
        let mut texts = Vec::with_capacity(layout.len());
        for file in layout {
            match get(file).await {
                Ok(bytes) => match String::from_utf8(bytes) {
                    Ok(text) => texts.push(text),
                    Err(_) => {
                        asked.push(answer(file, "not UTF-8 text"));
                        continue 'layouts;
                    }
                },
                Err(what) => {
                    asked.push(answer(file, what));
                    continue 'layouts;
                }
            }
        }
        tokenizer = Some(match <[String; 2]>::try_from(texts) {
            Ok([vocab_json, merges_txt]) => TokenizerFiles::VocabAndMerges {
                vocab_json,
                merges_txt,
            },
            Err(mut one) => TokenizerFiles::TokenizerJson(one.remove(0).into_bytes()),
        });
        break;
    }
    let tokenizer = tokenizer.ok_or_else(|| ModelFolderError::NoTokenizer {
        base: base.to_string(),
        asked,
    })?;
    let weights =
        get("model.safetensors")
            .await
            .map_err(|what| ModelFolderError::NoSafetensors {
                base: base.to_string(),
                answer: answer("model.safetensors", what),
            })?;
    Ok(ModelParts {
        config_json,
        weights,
        tokenizer,
    })
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::HashMap;

    use super::*;
    use crate::data::served_file::{FileKind, check};

    const PAGE: &str = "<!DOCTYPE html><html><head></head><body></body></html>";
    /// A GPT-2 `config.json`.
    const CONFIG: &[u8] = br#"{"n_layer": 1, "n_head": 1, "n_embd": 4, "vocab_size": 5,
        "n_positions": 8, "layer_norm_epsilon": 1e-5}"#;

    /// A host holding `files`; with `fallback`, every other path is answered with the page and
    /// status 200, as `trunk serve` and single-page static hosts do. Records what was asked.
    struct Host {
        files: HashMap<&'static str, Vec<u8>>,
        fallback: bool,
        asked: RefCell<Vec<String>>,
    }

    impl Host {
        fn new(files: &[(&'static str, &[u8])], fallback: bool) -> Self {
            Self {
                files: files.iter().map(|(n, b)| (*n, b.to_vec())).collect(),
                fallback,
                asked: RefCell::default(),
            }
        }

        /// As the browser's fetch does: the answer, checked against the kind its name implies.
        async fn get(&self, file: &'static str) -> Result<Vec<u8>, String> {
            self.asked.borrow_mut().push(file.to_string());
            let (content_type, body) = match self.files.get(file) {
                Some(body) => ("application/octet-stream", body.clone()),
                None if self.fallback => ("text/html", PAGE.as_bytes().to_vec()),
                None => return Err("HTTP 404 Not Found".into()),
            };
            check(FileKind::for_name(file), Some(content_type), &body)
                .map(|()| body)
                .map_err(|e| e.to_string())
        }
    }

    fn weights() -> Vec<u8> {
        let header = b"{}";
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header);
        bytes
    }

    fn read(host: &Host) -> Result<ModelParts, ModelFolderError> {
        pollster::block_on(read_model_folder("models/test/", |file| host.get(file)))
    }

    #[test]
    fn vocab_and_merges_behind_a_page_fallback() {
        let weights = weights();
        let host = Host::new(
            &[
                ("config.json", CONFIG),
                ("vocab.json", b"{\"a\":0}"),
                ("merges.txt", b"#version: 0.2\n"),
                ("model.safetensors", &weights),
            ],
            true,
        );
        let parts = read(&host).expect("the folder reads");
        assert!(matches!(
            parts.tokenizer,
            TokenizerFiles::VocabAndMerges { ref merges_txt, .. } if merges_txt.starts_with("#version")
        ));
        assert_eq!(parts.weights, weights);
        assert_eq!(
            *host.asked.borrow(),
            [
                "config.json",
                "tokenizer.json",
                "vocab.json",
                "merges.txt",
                "model.safetensors"
            ]
        );
    }

    #[test]
    fn openai_names_are_the_last_layout() {
        let weights = weights();
        let host = Host::new(
            &[
                ("config.json", CONFIG),
                ("encoder.json", b"{\"a\":0}"),
                ("vocab.bpe", b"#version: 0.2\n"),
                ("model.safetensors", &weights),
            ],
            false,
        );
        assert!(matches!(
            read(&host).unwrap().tokenizer,
            TokenizerFiles::VocabAndMerges { .. }
        ));
    }

    #[test]
    fn tokenizer_json_is_asked_for_first() {
        let weights = weights();
        let host = Host::new(
            &[
                ("config.json", CONFIG),
                ("tokenizer.json", b"{\"model\":{}}"),
                ("model.safetensors", &weights),
            ],
            true,
        );
        assert!(matches!(
            read(&host).unwrap().tokenizer,
            TokenizerFiles::TokenizerJson(ref json) if json == b"{\"model\":{}}"
        ));
    }

    #[test]
    fn no_tokenizer_names_every_file_and_answer() {
        let weights = weights();
        // vocab.json is there, its merges are not.
        let host = Host::new(
            &[
                ("config.json", CONFIG),
                ("vocab.json", b"{}"),
                ("model.safetensors", &weights),
            ],
            true,
        );
        let error = read(&host).unwrap_err();
        let ModelFolderError::NoTokenizer { asked, .. } = &error else {
            panic!("{error}");
        };
        let files: Vec<&str> = asked.iter().map(|a| a.file.as_str()).collect();
        assert_eq!(files, ["tokenizer.json", "merges.txt", "encoder.json"]);
        let message = error.to_string();
        assert!(message.contains("models/test/"), "{message}");
        assert!(
            message.contains("tokenizer.json: an HTML page"),
            "{message}"
        );
    }

    #[test]
    fn required_files_fail_with_what_came_back() {
        let host = Host::new(&[("tokenizer.json", b"{}")], false);
        assert_eq!(
            read(&host).unwrap_err().to_string(),
            "the model folder models/test/ has no config.json: HTTP 404 Not Found"
        );
        let host = Host::new(&[("config.json", CONFIG), ("tokenizer.json", b"{}")], true);
        let message = read(&host).unwrap_err().to_string();
        assert!(
            message.starts_with(
                "the model folder models/test/ has no model.safetensors: an HTML page"
            ) && message.contains("pytorch_model.bin"),
            "{message}"
        );
    }

    /// A model clozelab does not run is refused by its config, before the tokenizer and the
    /// weights are downloaded.
    #[test]
    fn an_unsupported_config_is_refused_before_the_weights_are_asked_for() {
        let weights = weights();
        let config = br#"{"model_type": "opt", "hidden_size": 768}"#;
        let host = Host::new(
            &[
                ("config.json", config),
                ("tokenizer.json", b"{}"),
                ("model.safetensors", &weights),
            ],
            false,
        );
        let message = read(&host).unwrap_err().to_string();
        assert!(
            message.contains("models/test/") && message.contains("\"opt\""),
            "{message}"
        );
        assert_eq!(*host.asked.borrow(), ["config.json"]);
    }
}
