//! `clozelab make-test-model`: the deterministic random GPT-2 (or GPT-NeoX, or Llama) the tests and
//! benchmarks run on (GPT-2's real vocabulary, random weights), written as a model folder.

use std::path::Path;

use super::commands::MakeTestModelArgs;
use super::error::CliError;
use super::flags::DEFAULT_TOKENIZER_DIR;
use super::flags::TestFamily;
use crate::model::testmodel::{
    TEST_WEIGHT_STD, generate_weights_with_std, test_config, test_gpt_neox_config,
    test_llama_config, to_safetensors,
};
use crate::model::{Family, TransformerConfig};
use crate::runtime::modeldir::{read_text, vocab_and_merges_paths};
use crate::text::tokenizer::{END_OF_TEXT, tokenizer_json};

pub fn make_test_model(args: &MakeTestModelArgs) -> Result<(), CliError> {
    let MakeTestModelArgs {
        out,
        seed,
        layers,
        dim,
        heads,
        tokenizer,
        family,
        kv_heads,
        weight_std,
    } = args;
    let (seed, layers, dim, heads) = (*seed, *layers, *dim, *heads);
    if layers == 0 || dim == 0 || heads == 0 || !dim.is_multiple_of(heads) {
        return Err(CliError::usage(
            "--layers, --dim and --heads must be positive, with --heads dividing --dim",
        ));
    }
    let config = match family {
        TestFamily::Gpt2 => test_config(layers, dim, heads),
        TestFamily::GptNeox => {
            if !(dim / heads).is_multiple_of(8) {
                return Err(CliError::usage(
                    "a GPT-NeoX test model's heads must be a multiple of 8 wide (a quarter of each turns, in pairs)",
                ));
            }
            test_gpt_neox_config(layers, dim, heads)
        }
        TestFamily::Llama => {
            let thirds = heads.is_multiple_of(3).then_some(heads / 3);
            let kv_heads = kv_heads.or(thirds).unwrap_or(heads);
            if kv_heads == 0 || !heads.is_multiple_of(kv_heads) || !(dim / heads).is_multiple_of(2)
            {
                return Err(CliError::usage(
                    "a Llama test model's --kv-heads must divide --heads, and its heads be an even number of values wide",
                ));
            }
            test_llama_config(layers, dim, heads, kv_heads)
        }
    };
    if !(weight_std.is_finite() && *weight_std > 0.0) {
        return Err(CliError::usage("--weight-std must be a positive number"));
    }
    if kv_heads.is_some() && *family != TestFamily::Llama {
        return Err(CliError::usage(
            "--kv-heads is for --family llama (the others have as many key/value heads as heads)",
        ));
    }
    let weights = TestWeights {
        seed,
        std: *weight_std,
    };
    write_test_model(out, weights, &config, Some(tokenizer))?;
    eprintln!(
        "wrote {} test model ({layers} layers, {dim} dims, {heads} heads, seed {seed}, weights' standard deviation {weight_std}) to {}",
        config.family.model_type(),
        out.display()
    );
    Ok(())
}

/// What a test model's weights are drawn from: the seed and the matrices' standard deviation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TestWeights {
    pub seed: u64,
    pub std: f32,
}

impl TestWeights {
    /// `seed`'s weights at [`TEST_WEIGHT_STD`], what the tests' models have.
    pub fn seeded(seed: u64) -> Self {
        Self {
            seed,
            std: TEST_WEIGHT_STD,
        }
    }
}

/// GPT-2's `vocab.json` with `<|endoftext|>` moved to id 0 and every other token one id later.
fn special_first(vocab_json: &str) -> Result<String, CliError> {
    let vocab: std::collections::BTreeMap<String, u32> = serde_json::from_str(vocab_json)
        .map_err(|e| crate::text::tokenizer::TokenizerError::Vocab(e.to_string()))?;
    let end_of_text = vocab.get(END_OF_TEXT).copied();
    let moved: std::collections::BTreeMap<String, u32> = vocab
        .into_iter()
        .map(|(token, id)| match Some(id) == end_of_text {
            true => (token, 0),
            false => (token, id + u32::from(end_of_text.is_some_and(|e| id < e))),
        })
        .collect();
    serde_json::to_string(&moved)
        .map_err(|e| crate::text::tokenizer::TokenizerError::Vocab(e.to_string()).into())
}

/// Writes the deterministic test model folder of `config`: config and weights, with the
/// tokenizer as the family's released models ship it (GPT-2 and GPT-NeoX `vocab.json` +
/// `merges.txt`, Llama a `tokenizer.json` with `<|endoftext|>` at id 0 and a
/// `tokenizer_config.json` naming GPT-2's tokenizer class, as SmolLM2 has).
pub fn write_test_model(
    out: &Path,
    weights: TestWeights,
    config: &TransformerConfig,
    tokenizer_dir: Option<&Path>,
) -> Result<(), CliError> {
    let tokenizer_dir = tokenizer_dir.unwrap_or(Path::new(DEFAULT_TOKENIZER_DIR));
    let (vocab, merges) = vocab_and_merges_paths(tokenizer_dir).ok_or_else(|| {
        CliError::Missing(format!(
            "no GPT-2 vocabulary in {} (run bash scripts/setup.sh, or pass --tokenizer DIR)",
            tokenizer_dir.display()
        ))
    })?;
    let TestWeights { seed, std } = weights;
    let weights = to_safetensors(&generate_weights_with_std(config, seed, std))?;
    std::fs::create_dir_all(out).map_err(CliError::io("create", out))?;
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(out.join(name), bytes).map_err(CliError::io("write", out.join(name)))
    };
    write("config.json", config.to_hf_json().as_bytes())?;
    write("model.safetensors", &weights)?;
    let (vocab, merges) = (read_text(&vocab)?, read_text(&merges)?);
    match config.family {
        Family::Llama { .. } => {
            // `<|endoftext|>` first, as SmolLM2's vocabulary has its special tokens, so that
            // nothing may take GPT-2's id 50256 for it.
            let vocab = special_first(&vocab)?;
            write("tokenizer.json", &tokenizer_json(&vocab, &merges)?)?;
            write(
                "tokenizer_config.json",
                serde_json::json!({
                    "tokenizer_class": "GPT2Tokenizer",
                    "bos_token": END_OF_TEXT, "eos_token": END_OF_TEXT, "unk_token": END_OF_TEXT,
                    "add_prefix_space": false, "model_max_length": config.n_positions,
                })
                .to_string()
                .as_bytes(),
            )?;
        }
        _ => {
            write("vocab.json", vocab.as_bytes())?;
            write("merges.txt", merges.as_bytes())?;
        }
    }
    write(
        "clozelab-test-model.json",
        serde_json::json!({"generator": "clozelab make-test-model", "seed": seed, "weight_std": std, "random_weights": true})
            .to_string()
            .as_bytes(),
    )?;
    Ok(())
}
